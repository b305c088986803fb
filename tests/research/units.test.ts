/** The research core's pure parts: plan, evidence ranking, extractive synthesis, citation parsing and checking. */
import { describe, expect, it } from "vitest";
import { buildQuestionModel, sentenceRelevance } from "../../core/answers/relevance.ts";
import { rankPassages, type SourceText } from "../../core/answers/evidence.ts";
import { citedSentences, parseModelReport, supportIndex, verifyReport } from "../../core/answers/llm.ts";
import { parseModelQueries, planSubQueries } from "../../core/operations/research/plan.ts";
import { citeSentence, extractiveReport, splitSentences } from "../../core/answers/synthesis.ts";

const src = (id: string, host: string, text: string): SourceText => ({ id, host, text, fromPage: true });

describe("research core", () => {
  it("plans deterministic, distinct sub-queries scaled by tier", () => {
    const q = "Why did the Roman Empire fall?";
    expect(planSubQueries(q, "summary")).toEqual(planSubQueries(q, "summary"));
    expect(planSubQueries(q, "basic").length).toBe(1);
    expect(planSubQueries(q, "summary").length).toBe(2);
    expect(planSubQueries(q, "full").length).toBe(4);
    expect(planSubQueries(q, "full")).toContain("Roman Empire fall causes");
    expect(planSubQueries("Postgres vs MySQL for analytics", "detailed").slice(0, 2)).toEqual(["Postgres analytics", "MySQL analytics"]);
    expect(parseModelQueries("Here are the queries:\n1. roman empire decline economy\n- \"barbarian invasions rome\"\n", q, "summary")).toEqual([
      "roman empire decline economy",
      "barbarian invasions rome",
    ]);
  });

  it("plans sub-queries that each ask something the question does not: no bare repeat, no repeated word", () => {
    // The defect: "What causes earthquakes?" planned "causes earthquakes" and "causes earthquakes causes".
    expect(planSubQueries("What causes earthquakes?", "summary")).toEqual(["earthquakes reasons explained", "earthquakes main factors"]);
    expect(planSubQueries("When did the Berlin Wall fall?", "summary")).toEqual(["Berlin Wall fall date", "Berlin Wall fall timeline"]);
    expect(planSubQueries("Who was Ada Lovelace?", "summary")).toEqual(["Ada Lovelace biography", "Ada Lovelace known for"]);
    expect(planSubQueries("What is the difference between weather and climate?", "summary")).toEqual(["weather definition", "climate definition"]);
    // "Who composed X" asks for the maker of X, not for a biography of the act ("composed Four Seasons biography").
    expect(planSubQueries("Who composed The Four Seasons?", "summary")).toEqual(["Four Seasons composer", "Four Seasons history origin"]);
    expect(planSubQueries("Who invented the telephone?", "full")).toEqual(["telephone inventor", "telephone history origin", "telephone credited to", "telephone inventor biography"]);
    expect(planSubQueries("How many moons does Mars have?", "summary")).toEqual(["moons Mars number figures", "moons Mars statistics"]);
    expect(planSubQueries("How long do elephants live?", "summary")).toEqual(["elephants live number figures", "elephants live statistics"]);
    expect(planSubQueries("Is it true that goldfish have a three-second memory?", "summary")).toEqual(["goldfish three-second memory evidence", "goldfish three-second memory myth or fact"]);
    expect(planSubQueries("What happens when you swallow gum?", "summary")).toEqual(["swallow gum effects", "swallow gum risks"]);
    const questions = [
      "What causes earthquakes?", "Why is the sky blue?", "How do bees make honey?", "How to brew green tea properly?", "What is photosynthesis?",
      "Is coffee or tea higher in caffeine?", "Where do monarch butterflies migrate?", "a b c", "causes causes", "What is a definition?",
      "Who wrote Pride and Prejudice?", "Who first invented the printing press?",
    ];
    const set = (q: string) => [...new Set(q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].sort().join(" ");
    for (const q of questions) {
      const planned = planSubQueries(q, "full");
      expect(planned.length, q).toBeGreaterThan(0);
      const core = set(q.replace(/^(what|why|how|when|who|where|is|are|does|do|to|the|a)\b\s*/gi, ""));
      for (const sub of planned) {
        const words = sub.toLowerCase().split(" ");
        expect(new Set(words).size, sub).toBe(words.length);
        expect(set(sub), `${q} → ${sub}`).not.toBe(set(q));
        expect(set(sub), `${q} → ${sub}`).not.toBe(core);
      }
      expect(new Set(planned.map(set)).size, q).toBe(planned.length);
    }
  });

  it("ranks passages by relevance and agreement and caps them per site", () => {
    const filler = "Unrelated words about gardening tomatoes and watering schedules in the summer months here.";
    const sources = [
      src("S1", "a.example", `The bridge collapsed after the steel cables corroded over many decades of neglect.\n\n${filler}\n\nThe bridge collapsed again in a second span of cables.\n\nBridge cables corroded badly for decades before anyone noticed.`),
      src("S2", "b.example", "Inspectors said corroded steel cables made the bridge collapse after decades of neglect."),
      src("S3", "c.example", filler),
    ];
    const ranked = rankPassages(sources, "why did the bridge collapse", ["bridge cables corroded"], { limit: 10, perHost: 2 });
    expect(ranked.filter((p) => p.host === "a.example").length).toBe(2);
    expect(ranked.some((p) => p.sourceId === "S3")).toBe(false);
    expect(ranked.every((p, i) => i === 0 || ranked[i - 1]!.score >= p.score)).toBe(true);
    expect(ranked.find((p) => p.sourceId === "S2")!.agreement).toBeGreaterThan(0.5);
  });

  it("still reports when there is one source, or when every source is on one site", () => {
    const pageA = "The bridge collapsed after its steel cables corroded over decades. Inspectors had warned about the corroded cables in 2015. The city had delayed the repairs to save money.";
    const pageB = "Engineers found the cables of the bridge had lost half their steel to corrosion. The repairs the inspectors asked for were never funded by the city.";
    const q = "Why did the bridge collapse?";
    const one = extractiveReport(rankPassages([src("S1", "a.example", pageA)], q, [], { limit: 10, perHost: 5 }), q, { findings: 3, summarySentences: 2 });
    expect(one.findings.length).toBeGreaterThan(0);
    expect(one.findings[0]!.text).toMatch(/bridge collapsed/);
    const sameSite = [src("S1", "a.example", pageA), src("S2", "a.example", pageB)];
    const both = extractiveReport(rankPassages(sameSite, q, [], { limit: 10, perHost: 5 }), q, { findings: 4, summarySentences: 2 });
    expect(new Set(both.findings.flatMap((f) => f.citations))).toEqual(new Set(["S1", "S2"]));
  });

  it("merges near-duplicate sentences across sources into one finding citing both", () => {
    const a = "The city council approved the new budget for public transport on Tuesday evening.";
    const b = "On Tuesday evening the city council approved the new budget for public transport, officials said.";
    const sources = [
      src("S1", "a.example", `${a} Buses will run every ten minutes in the city centre from next spring.`),
      src("S2", "b.example", `${b} The vote was close and the opposition criticised the public transport budget.`),
    ];
    const evidence = rankPassages(sources, "city council public transport budget", [], { limit: 10, perHost: 3 });
    const report = extractiveReport(evidence, "city council public transport budget", { findings: 5, summarySentences: 2 });
    const merged = report.findings.find((f) => f.text === a || f.text === b)!;
    expect(merged.citations).toEqual(["S1", "S2"]);
    expect(report.findings.filter((f) => /approved the new budget/.test(f.text)).length).toBe(1);
    expect(report.summary).toMatch(/\[S1\]\[S2\]\./);
    expect(extractiveReport(evidence, "city council public transport budget", { findings: 5, summarySentences: 2 })).toEqual(report);
  });

  it("splits sentences around abbreviations and formats and parses citations", () => {
    expect(splitSentences("Mr. Smith went to Washington. He met Sen. Jones at 5 p.m. in the U.S. Capitol. Then he left.")).toEqual([
      "Mr. Smith went to Washington.", "He met Sen. Jones at 5 p.m. in the U.S. Capitol.", "Then he left.",
    ]);
    expect(citeSentence("It rained.", ["S1", "S3"])).toBe("It rained [S1][S3].");
    expect(citeSentence("He said “no.”", ["S2"])).toBe("He said “no” [S2].");
    expect(citedSentences("It rained [S1]. It was cold. [S2, S3] No source here.")).toEqual([
      { text: "It rained.", citations: ["S1"] },
      { text: "It was cold.", citations: ["S2", "S3"] },
      { text: "No source here.", citations: [] },
    ]);
    expect(parseModelReport('```json\n{"summary":"A [S1].","findings":["B [S2]."]}\n```')).toEqual({ summary: "A [S1].", findings: ["B [S2]."] });
    expect(parseModelReport("Prose summary [S1].\n\n- first point [S2].\n- second [S1].").findings).toEqual(["first point [S2].", "second [S1]."]);
  });

  it("drops citations the cited source does not support, unknown ids, and sentences left with none", () => {
    const index = supportIndex([
      src("S1", "a.example", "The museum reopened in March after a two year renovation of its glass roof."),
      src("S2", "b.example", "Ticket prices rose sharply this year because of higher energy costs for heating."),
    ]);
    const { report, dropped } = verifyReport(
      { summary: "The museum reopened in March after renovating its glass roof [S1][S2][S7]. Cats can fly [S1].", findings: ["Ticket prices rose because of energy costs [S2]."] },
      index,
      5,
    );
    expect(report.summary).toBe("The museum reopened in March after renovating its glass roof [S1].");
    expect(report.findings).toEqual([{ text: "Ticket prices rose because of energy costs.", citations: ["S2"] }]);
    expect(dropped).toEqual({ citations: 3, sentences: 1 });
  });
});

describe("document relevance", () => {
  const doc = (id: string, text: string) => ({ id, host: `${id}.example`, title: "", text, fromPage: true });
  it("weighs agreement by how relevant the agreeing pages are: two pages on another sense of a word stay below the pages on the question", () => {
    const docs = [
      doc("a", "Bees collect nectar from flowers and carry it back to the hive. Inside the hive, worker bees pass the nectar from mouth to mouth, adding enzymes. They fan the nectar with their wings until most of the water evaporates and it thickens into honey."),
      doc("b", "Nectar is mostly water and sugar when bees collect it from flowers. Enzymes from the bees break the sugars down inside the hive. The bees fan their wings to evaporate the water, then seal the honey in wax cells."),
      doc("c", "Worker bees store the thickened nectar in wax cells of the hive. Once enough water has evaporated, they cap each cell with wax so the honey keeps for months."),
      // Two pages about a honey cake share their own vocabulary with each other, and the question's words.
      doc("d", "This honey cake recipe needs flour, butter, eggs and a cup of honey that bees make. Bake the cake in a warm oven for forty minutes and glaze it with more honey and lemon."),
      doc("e", "Our honey cake uses flour, butter and eggs, and the bees make the best honey for it. Glaze the warm cake with lemon and bake a second one for the freezer."),
    ];
    const m = buildQuestionModel("How do bees make honey?", docs);
    const on = ["a", "b", "c"].map((id) => m.documents.get(id)!);
    const off = ["d", "e"].map((id) => m.documents.get(id)!);
    // With agreement from the closest sites alone, the two cake pages vouch for each other and one outranks page c.
    expect(Math.min(...on)).toBeGreaterThan(Math.max(...off));
  });

  it("a sentence that begins with a pronoun speaks of what the sentence before it named", () => {
    const born = "He was born in 1856 in Smiljan.";
    const named = "Nikola Tesla was an inventor who worked on alternating current.";
    const model = (first: string) =>
      buildQuestionModel("Who was Nikola Tesla?", [
        doc("a", first),
        doc("b", "Nikola Tesla worked on alternating current motors and the induction motor with Westinghouse."),
        doc("c", "Tesla designed alternating current systems and later worked on radio and wireless power."),
      ]);
    // After the sentence that names him, "he" is Tesla; before it, nothing says who "he" is.
    expect(sentenceRelevance(born, "a", model(`${named} ${born}`))).toBeGreaterThan(0);
    expect(sentenceRelevance(born, "a", model(`${born} ${named}`))).toBe(0);
  });
});
