/**
 * A page is on the question only when it is about the question's subject: a sibling question
 * ("Why do wolves howl?" beside "Why do owls hoot?"), a namesake ("Kangaroo Island" beside "where do
 * kangaroos live") or a thing named after the person asked about shares the words and the answer's
 * form, and must neither pass the relevance gate nor be cited.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadQuestions } from "../../bench/research/dataset.ts";
import { score } from "../../bench/research/metric.ts";
import { OTHER_SUBJECT, ownTitle, subjectFit } from "../../core/answers/page-subject.ts";
import { buildQuestionModel, RELEVANT } from "../../core/answers/relevance.ts";
import { extractiveReport } from "../../core/answers/synthesis.ts";
import { rankPassages, type SourceText } from "../../core/answers/evidence.ts";
import { serveBenchQuestions, type BenchResearch } from "./bench-questions.ts";

const page = (id: string, title: string, ...sentences: string[]): SourceText => ({ id, host: `${id.toLowerCase()}.example`, title: `${title} | Site ${id}`, text: sentences.join(" "), fromPage: true });

describe("page subject", () => {
  it("reads a sibling question, a namesake and a thing named after a person from the title and the text", () => {
    const q = "Why do owls hoot?";
    expect(ownTitle("Why do wolves howl? | Wild Facts")).toBe("Why do wolves howl?");
    expect(subjectFit(q, "Why do wolves howl?", "Wolves howl to call the pack.")).toBe(OTHER_SUBJECT);
    // The same subject asked another way, or a title without a question: the page keeps its relevance.
    expect(subjectFit(q, "Why owls hoot at night", "Owls hoot to claim a territory.")).toBe(1);
    expect(subjectFit(q, "Do owls hoot in winter?", "Owls hoot most in late winter.")).toBe(1);
    expect(subjectFit("How to plant tulip bulbs?", "How to plant a hedge", "Dig a trench for the hedge.")).toBe(OTHER_SUBJECT);
    // A namesake: the title pairs a question word with another, and the text keeps the pairing.
    expect(subjectFit("Where do kangaroos live?", "Kangaroo Island holidays", "Kangaroo Island lies off the coast. Book a cottage.")).toBe(OTHER_SUBJECT);
    expect(subjectFit("Where do kangaroos live?", "Kangaroo habitats", "Kangaroos live in open woodland and grassland.")).toBe(1);
    // "Who was X": a page that never speaks of a person is about something named after X.
    expect(subjectFit("Who was Nikola Tesla?", "The tesla", "The tesla is a unit of magnetic flux density.")).toBe(OTHER_SUBJECT);
    expect(subjectFit("Who was Nikola Tesla?", "Tesla in New York", "Tesla lived in a hotel. He fed pigeons.")).toBe(1);
  });

  it("a sibling page that shares the on-topic pages' vocabulary falls under the relevance gate and gives no finding", () => {
    const question = "Why do owls hoot?";
    const sources = [
      page("S1", "Owl calls explained",
        "Owls hoot to claim a territory and warn rival owls to keep away from their nesting trees at night.",
        "A male owl hoots to attract a mate in late winter, and the female often answers with a higher call.",
        "Owls are birds of prey that hunt mice and voles in the dark with sharp hearing and silent feathers."),
      page("S2", "Why do wolves howl?",
        "Wolves howl to claim a territory and warn rival packs to keep away at night, much as owls hoot from their nesting trees.",
        "A lone wolf howls to find its pack again, and the other wolves answer with a howl of their own.",
        "Wolves are predators that hunt deer and elk in the dark forest in packs of six or more animals."),
      page("S3", "Night sounds in the woods",
        "Tawny owls hoot from a high branch to tell other owls that the nesting trees are taken.",
        "The hooting of a pair in late winter is a courtship duet before the female lays her eggs.",
        "Walkers in the woods at night often mistake the hoot of an owl for a person calling out."),
      page("S4", "Barn owls and farmers",
        "Farmers welcome barn owls because a single pair catches thousands of mice and voles in a year.",
        "Owls hoot less on windy nights, when their calls would not carry far through the trees.",
        "A nest box on a barn wall gives owls a dry place to raise their young away from predators."),
    ];
    const model = buildQuestionModel(question, sources.map((s) => ({ id: s.id, host: s.host, title: s.title!, text: s.text, fromPage: true })));
    expect(model.documents.get("S2")!).toBeLessThan(RELEVANT);
    for (const id of ["S1", "S3"]) expect(model.documents.get(id)!).toBeGreaterThan(model.documents.get("S2")!);
    const evidence = rankPassages(sources, question, [], { limit: 12, perHost: 4, model });
    const report = extractiveReport(evidence, question, { findings: 5, summarySentences: 3, model });
    expect(report.findings.length).toBeGreaterThan(0);
    expect(report.findings.flatMap((f) => f.citations)).not.toContain("S2");
    expect(report.findings.some((f) => /wolf|wolves|howl/i.test(f.text))).toBe(false);
  });
});

// The same through POST /v1/research on the bench's pages (now development data): a sibling question
// ("Who was Kublai Khan?" beside "Who was Genghis Khan?", "How do hearing aids work?" beside
// noise-cancelling headphones) and a namesake ("Fjord cruise deals" beside "What is a fjord?") were
// cited before this rule; they now fall under the relevance gate and give no finding.
describe("research leaves sibling and namesake pages out of the report", () => {
  let bench: BenchResearch;
  const questions = loadQuestions().filter((q) => ["q81", "q94", "q103"].includes(q.id));
  const offTitles: Record<string, string> = { q81: "How do hearing aids work?", q94: "Who was Kublai Khan?", q103: "Fjord cruise deals" };

  beforeAll(async () => {
    bench = await serveBenchQuestions(questions);
  });
  afterAll(async () => {
    await bench?.close();
  });

  for (const id of ["q81", "q94", "q103"]) {
    it(`${id}: the page titled "${offTitles[id]}" is not cited and falls under the relevance gate`, async () => {
      const q = questions.find((x) => x.id === id)!;
      const body = await bench.ask(q);
      const s = score(q, body, (u) => bench.pages.get(u));
      expect(s.wrong.filter((w) => w.includes(offTitles[id]!))).toEqual([]);
      // Its relevance (the source's score, the best page at 1) is under the gate.
      const off = body.sources.find((x) => bench.pages.get(x.url)!.title === offTitles[id])!;
      expect(off.score).toBeLessThan(RELEVANT);
    }, 30_000);
  }
});
