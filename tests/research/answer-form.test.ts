/**
 * A closed question's answer has a form (answer-form.ts): a date for "when", a rank for "which is
 * the largest", a step for "how to", the act for "who composed". Background sentences of the pages
 * on the question name the subject as often as the answers but lack that form, and the report must
 * not cite them: checked on the form detector itself, then end to end through POST /v1/research on
 * questions of the bench's set where, without the rule, such sentences were cited.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANOTHER, answerShape, formWeight, FORMLESS, hasAnswerForm } from "../../core/answers/answer-form.ts";
import { subjectStems } from "../../core/answers/question-kind.ts";
import { stems } from "../../core/answers/words.ts";
import { loadQuestions } from "../../bench/research/dataset.ts";
import { score } from "../../bench/research/metric.ts";
import { serveBenchQuestions, type BenchResearch } from "./bench-questions.ts";

describe("answer form", () => {
  it("tells closed questions by what they ask for, and leaves open ones without a form", () => {
    expect(answerShape("When did the Berlin Wall fall?")).toBe("when");
    expect(answerShape("Where do salmon spawn?")).toBe("where");
    expect(answerShape("Which planet is the hottest?")).toBe("which");
    expect(answerShape("What is the tallest tree on Earth?")).toBe("which");
    expect(answerShape("How to repot an orchid?")).toBe("howto");
    expect(answerShape("Who composed The Four Seasons?")).toBe("who-act");
    expect(answerShape("Who was Ada Lovelace?")).toBe("who-person");
    expect(answerShape("What is the difference between a frog and a toad?")).toBe("compare");
    expect(answerShape("Is tea or coffee higher in caffeine?")).toBe("compare");
    expect(answerShape("How many moons does Mars have?")).toBe("quantity");
    expect(answerShape("How long does it take to boil an egg?")).toBe("quantity");
    expect(answerShape("What percentage of the Earth is water?")).toBe("quantity");
    for (const q of ["Why is the sky blue?", "How does a compass work?", "What is osmosis?", "What causes thunder?"]) expect(answerShape(q)).toBe("open");
  });

  it("finds the form in answers and misses it in background sentences about the same subject", () => {
    expect(hasAnswerForm("The bridge opened to traffic in May 1937.", "when")).toBe(true);
    expect(hasAnswerForm("The work took most of the fourth century.", "when")).toBe(true);
    expect(hasAnswerForm("The bridge is painted a colour called international orange.", "when")).toBe(false);
    expect(hasAnswerForm("Koalas live in the eucalyptus forests of eastern Australia.", "where")).toBe(true);
    expect(hasAnswerForm("Most wild koalas are found in Queensland.", "where")).toBe(true);
    expect(hasAnswerForm("Koalas sleep for up to twenty hours a day.", "where")).toBe(false);
    expect(hasAnswerForm("Jupiter is the biggest planet, more than twice the mass of the others together.", "which")).toBe(true);
    expect(hasAnswerForm("Saturn has rings made of ice and rock.", "which")).toBe(false);
    expect(hasAnswerForm("Saturn is the second largest.", "which")).toBe(true);
    expect(hasAnswerForm("A thick forest covers the moon's surface in the story.", "which")).toBe(false);
    expect(hasAnswerForm("Water the orchid once a week, letting the pot drain.", "howto")).toBe(true);
    expect(hasAnswerForm("First, loosen the roots gently with your fingers.", "howto")).toBe(true);
    expect(hasAnswerForm("If the leaves wrinkle, give it more water.", "howto")).toBe(true);
    expect(hasAnswerForm("Orchids are one of the largest families of flowering plants.", "howto")).toBe(false);
    expect(hasAnswerForm("The opera was composed by Giuseppe Verdi in 1853.", "who-act")).toBe(true);
    expect(hasAnswerForm("The opera lasts about two and a half hours.", "who-act")).toBe(false);
    expect(hasAnswerForm("She was born in Warsaw and studied in Paris.", "who-person")).toBe(true);
    expect(hasAnswerForm("A statue of her stands in the city's main square.", "who-person")).toBe(false);
    // "Who was Ramesses?": a sentence that opens on another person's name is that person's life.
    const ramesses = new Set(stems("Ramesses"));
    expect(hasAnswerForm("Ramesses became pharaoh in his twenties.", "who-person", ramesses)).toBe(true);
    expect(hasAnswerForm("Hatshepsut was a pharaoh who ruled long before Ramesses.", "who-person", ramesses)).toBe(false);
    expect(hasAnswerForm("A toad's skin is dry and warty, whereas a frog's is smooth.", "compare")).toBe(true);
    expect(hasAnswerForm("Frogs appear in many children's stories.", "compare")).toBe(false);
    // What both sides share is no difference: it weighs less than a sentence without the form, unless it also contrasts them.
    const sides = new Set(stems("frog toad"));
    expect(formWeight("Both frogs and toads lay their eggs in ponds and begin life as tadpoles.", "compare", sides)).toBe(ANOTHER);
    expect(formWeight("Frogs and toads are the same kind of animal, an amphibian.", "compare", sides)).toBe(ANOTHER);
    expect(formWeight("Both lay eggs in water, but a toad lays them in long strings rather than clumps.", "compare", sides)).toBe(1);
    expect(ANOTHER).toBeLessThan(FORMLESS);
    expect(hasAnswerForm("Mars has two small moons, Phobos and Deimos.", "quantity")).toBe(true);
    expect(hasAnswerForm("A hard-boiled egg needs about 10 minutes in boiling water.", "quantity")).toBe(true);
    expect(hasAnswerForm("Phobos is slowly spiralling in towards the planet.", "quantity")).toBe(false);
    expect(hasAnswerForm("Anything at all.", "open")).toBe(true);
  });

  it("for 'which is the largest', does not take a name for a superlative, and weighs down a rank said of an entity the sources do not agree on", () => {
    // "Everest" ends like a superlative; a name is no rank.
    expect(hasAnswerForm("Everest stands in the Himalayas on the border of Nepal.", "which")).toBe(false);
    expect(hasAnswerForm("Most climbers stop at the camp below the summit.", "which")).toBe(true);
    const subject = new Set(stems("Which is the longest bridge in Europe?"));
    const topic = new Map([["vasco", 1], ["gama", 1], ["lisbon", 0.9], ["crimean", 0.3]]);
    // The sources agree on the Vasco da Gama bridge; another bridge's rank is background, in the answer's own form.
    expect(formWeight("The Vasco da Gama Bridge is the longest bridge in Europe, at twelve kilometres.", "which", subject, topic)).toBe(1);
    expect(formWeight("The Crimean Bridge, over the Kerch Strait, is the second longest in Europe.", "which", subject, topic)).toBe(ANOTHER);
    expect(formWeight("R4, the ring road bridge, is the third longest.", "which", subject, topic)).toBe(ANOTHER);
    expect(formWeight("However, the figures depend on how a bridge is measured, and the longest may change.", "which", subject, topic)).toBe(1);
    expect(formWeight("Bridges are built from steel and concrete.", "which", subject, topic)).toBe(FORMLESS);
    // "When": the sources agree on 1799; a sentence dated only by other years is another event's.
    const stone = new Set(stems("When was the Rosetta Stone found?"));
    const agreedOn = new Map([["1799", 1], ["slab", 0.8], ["1801", 0.3]]);
    expect(formWeight("The Rosetta Stone was found in July 1799 by soldiers digging near Rashid.", "when", stone, agreedOn)).toBe(1);
    expect(formWeight("The stone was handed to the British in 1801 under a treaty.", "when", stone, agreedOn)).toBe(FORMLESS);
    expect(formWeight("Found in 1799, it was handed over in 1801.", "when", stone, agreedOn)).toBe(1);
    // With no year agreed on, any year is the form.
    expect(formWeight("The stone was handed to the British in 1801 under a treaty.", "when", stone, new Map([["slab", 0.8]]))).toBe(1);
    // Without the sources' vocabulary a rank is a rank.
    expect(formWeight("The Crimean Bridge is the second longest in Europe.", "which", subject)).toBe(1);
  });
});

describe("the question's form words", () => {
  it("are no part of what the question is about, unless nothing else is left", () => {
    expect(subjectStems("What is the difference between a meteor and a meteorite?")).toEqual([...stems("meteor meteorite")]);
    expect(subjectStems("What causes rust?")).toEqual([...stems("rust")]);
    expect(subjectStems("Is it true that goldfish have a three-second memory?")).toEqual([...stems("goldfish three-second memory")]);
    expect(subjectStems("Do goldfish really remember faces?")).toEqual([...stems("goldfish remember faces")]);
    expect(subjectStems("How many bones are in the human body?")).toEqual([...stems("bones human body")]);
    expect(subjectStems("How long do elephants live?")).toEqual([...stems("elephants live")]);
    expect(subjectStems("How long is the Nile?")).toEqual([...stems("long Nile")]);
    expect(subjectStems("How do noise-cancelling headphones work?")).toEqual([...stems("noise cancelling headphones")]);
    expect(subjectStems("What does it mean?")).toEqual([...stems("mean")]);
    // Only where they ask for the kind of answer: here "work" is part of the subject.
    expect(subjectStems("How does remote work affect sleep?")).toEqual([...stems("remote work affect sleep")]);
    expect(subjectStems("What are the main causes of inflation?")).toEqual([...stems("inflation")]);
  });
});

describe("research does not cite background sentences without the answer's form", () => {
  let bench: BenchResearch;
  // Without the form rule each cited a background sentence of an on-topic page at the summary tier:
  // "Baroque music is still played around the world" (who composed), "Sea ice covers much of the
  // Arctic in winter" (which is the largest ocean), "Many cooks inherit pans from their
  // grandparents" (how to clean a pan).
  const ids = ["q64", "q78", "q74"];
  const questions = loadQuestions().filter((q) => [...ids, "q79"].includes(q.id));

  beforeAll(async () => {
    bench = await serveBenchQuestions(questions);
  });
  afterAll(async () => {
    await bench?.close();
  });

  for (const id of ids) {
    it(`${id}: every finding is a labelled answer and the key facts are kept`, async () => {
      const q = questions.find((x) => x.id === id)!;
      const body = await bench.ask(q);
      const s = score(q, body, (u) => bench.pages.get(u));
      // q74 keeps one background sentence ("Cast iron holds heat well…"): the rule weighs it down, it does not drop it.
      expect(s.wrong.length).toBeLessThanOrEqual(id === "q74" ? 1 : 0);
      expect(s.correct).toBeGreaterThanOrEqual(3);
      expect(s.factsFound).toBeGreaterThanOrEqual(3);
    }, 30_000);
  }

  // "Difference" in the question is no word of its subject: counted as one, a page on comets (which
  // shares the meteor pages' dust, ice and orbits) ranked first and was the only page cited.
  it("q79: a page that names neither side of a comparison is not cited, and the answer's facts are found", async () => {
    const q = questions.find((x) => x.id === "q79")!;
    const body = await bench.ask(q);
    const s = score(q, body, (u) => bench.pages.get(u));
    expect(s.wrong).toEqual([]);
    expect(s.correct).toBeGreaterThanOrEqual(1);
    expect(s.factsFound).toBeGreaterThanOrEqual(2);
    expect(bench.pages.get(body.sources[0]!.url)!.on).toBe(true);
  }, 30_000);
});
