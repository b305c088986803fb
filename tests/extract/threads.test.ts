/**
 * Discussion threads: forum topics, Q&A pages, issue threads, mailing-list messages, a comment tree,
 * and an article whose comment section is NOT its content. The fixtures (tests/fixtures/extract/threads)
 * are modelled on the server-rendered markup of widely used forum, Q&A, tracker and archive software;
 * the expectations below were fixed before the extractor was first run on them.
 *
 * `posts`: text from every post, in thread order, that must come out (in that order).
 * `never`: user panels, signatures, vote and reply controls, navigation, and for the article, its comments.
 * Text a reader could want either way (Stack Exchange comments, a mail's plain-text signature,
 * issue timeline events like "added the bug label") is left unchecked.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { extractContent } from "../../core/extract/mod.ts";

interface ThreadCase {
  file: string;
  url: string;
  posts: string[];
  never: string[];
}

export const THREAD_CASES: ThreadCase[] = [
  {
    file: "phpbb.html",
    url: "https://forum.example.org/viewtopic.php?t=48213",
    posts: [
      "every resaw cut wanders off to the left",
      "Is this just blade lead",
      "Check where the gullets of the teeth sit on the upper wheel",
      "look at the set of the teeth",
      "You were both right",
      "the thumb test for uneven set is new to me",
    ],
    never: ["Joined:", "Posts:", "Measure twice, cut once", "my workshop blog", "Post Reply", "Board index", "Who is online", "Jump to", "Senior Member"],
  },
  {
    file: "xenforo.html",
    url: "https://bakers.example.com/threads/sourdough-starter-smells-like-nail-polish-remover.88121/",
    posts: [
      "smells sharply of acetone",
      "Is it dying, or is this normal",
      "It's hungry, not dying",
      "Rye ferments faster than wheat",
      "Switched to two feeds a day",
      "Bookmarking this, mine does the same on warm days",
    ],
    never: ["Joined", "Messages", "Baking since the last millennium", "Report", "Reply", "Similar threads", "Terms and rules", "Well-known member"],
  },
  {
    file: "discourse.html",
    url: "https://forum.example.net/t/migrating-a-postgres-12-cluster-with-logical-replication/5521",
    posts: [
      "We need to move a 2 TB Postgres 12 cluster",
      "The plan is a publication for all tables",
      "sequences are not replicated",
      "Raise max_sync_workers_per_subscription",
      "Done over the weekend",
    ],
    never: ["Likes", "Related topics", "Terms of Service", "Powered by", "next page", "Replication slot filling the disk"],
  },
  {
    file: "stackexchange.html",
    url: "https://code.example.com/questions/927358/how-do-i-undo-the-most-recent-local-commit",
    posts: [
      "I committed the wrong files to Git",
      "but that made a second commit",
      "Use a soft reset to move the branch back",
      "git reset --soft HEAD~1",
      "the default mixed reset",
      "Since Git 2.23 you can also amend",
      "git reflog",
    ],
    never: ["Up vote", "2877", "4021", "Improve this answer", "Follow", "98.3k", "Hot Network Questions", "Add a comment", "Sorted by", "Ask Question", "Tomas Lindqvist's user avatar"],
  },
  {
    file: "issue-tracker.html",
    url: "https://forge.example.com/tidewater/harbor-cli/issues/1287",
    posts: [
      "panics with \"index out of range\"",
      "Steps to reproduce",
      "Version 2.8.1 on Debian 12",
      "Thanks for the clear report",
      "A file that only holds comments crashes the same way",
      "Fixed in 2.8.2, released today",
    ],
    never: ["Sign up for free", "Assignees", "Participants", "No milestone", "Pull requests", "Skip to content", "reacted with thumbs up"],
  },
  {
    file: "pipermail.html",
    url: "https://lists.example.org/pipermail/tessera-users/2023-September/004413.html",
    posts: ["I can reproduce this with 5.1.0", "tiffcp -r 64 input.tif output.tif", "Could you send me one of the files off-list"],
    never: ["Previous message (by thread)", "Messages sorted by", "More information about the"],
  },
  {
    file: "news-comments.html",
    url: "https://courier.example.com/2024/06/03/lighting/",
    posts: [
      "Shops and restaurants on the harbour front will have to dim",
      "The rules limit the brightness",
      "Councillor Amira Dobson",
      "The bay's bird survey group also backed the change",
      "Business owners were split",
      "The council will pay for up to half the cost",
    ],
    never: [
      "About time. I have lived opposite", "Blackout curtains are cheaper", "Good news for the curlews",
      "Another rule for small businesses", "pier kiosks", "Leave a Reply", "Recent Posts", "thoughts on", "Regatta returns",
    ],
  },
  {
    file: "old-reddit.html",
    url: "https://old.reddit.example/r/Cooking/comments/1abc9x/whats_the_best_way_to_store_fresh_herbs/",
    posts: [
      "I buy a bunch of coriander and parsley every week",
      "Treat the soft herbs like cut flowers",
      "The jar trick is so simple",
      "For woody herbs like thyme",
      "Chop whatever you won't use this week",
    ],
    never: ["points", "permalink", "report", "upvoted", "readers", "Welcome to /r/Cooking", "User Agreement", "sorted by", "187 comments"],
  },
];

export function checkThread(c: ThreadCase): string[] {
  const html = readFileSync(new URL(`../fixtures/extract/threads/${c.file}`, import.meta.url), "utf8");
  const { text } = extractContent(html, c.url, { formats: ["text"] });
  const problems: string[] = [];
  let at = 0;
  for (const p of c.posts) {
    const i = text.indexOf(p, at);
    if (i < 0) problems.push(text.includes(p) ? `out of order: ${p}` : `missing: ${p}`);
    else at = i + p.length;
  }
  for (const n of c.never) if (text.includes(n)) problems.push(`kept: ${n}`);
  return problems;
}

/**
 * Still wrong, and why (`it.fails` says so when they start to pass):
 * - pipermail: the archive's "Previous message / Messages sorted by" lists are plain <ul>s with no
 *   name, and too little of their text is linked to read as link lists;
 * - old-reddit: the comments sit in a box named `commentarea`, which is read as an article's comment
 *   section (left out, as the article-with-comments page needs), so Readability picks one comment.
 */
const STILL_WRONG = new Set(["pipermail.html", "old-reddit.html"]);

describe("discussion threads", () => {
  for (const c of THREAD_CASES) {
    const test = STILL_WRONG.has(c.file) ? it.fails : it;
    test(`${c.file}: every post in order, no chrome`, () => {
      expect(checkThread(c)).toEqual([]);
    });
  }
});
