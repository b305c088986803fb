/**
 * Choosing the caption track for a requested language and building its fetch URL.
 * Order for a BCP-47 request such as `en-GB`: a manual track in `en-GB`, then a manual one
 * in its primary subtag `en` (or any `en-*`), then an auto-generated (ASR) one in the same
 * language, then a translation (`&tlang=`) of a translatable track.
 */
import type { CaptionTrack } from "./player.ts";

export interface CaptionChoice {
  track: CaptionTrack;
  /** Target language when the track is machine-translated; null for a native track. */
  translateTo: string | null;
}

const norm = (code: string) => code.toLowerCase().replace(/_/g, "-");
const primary = (code: string) => norm(code).split("-")[0]!;

/** Exact tag first, then the primary subtag, then any regional variant of it. */
function inLanguage(tracks: readonly CaptionTrack[], language: string): CaptionTrack | undefined {
  const wanted = norm(language);
  const lang = primary(language);
  return (
    tracks.find((t) => norm(t.languageCode) === wanted) ??
    tracks.find((t) => norm(t.languageCode) === lang) ??
    tracks.find((t) => primary(t.languageCode) === lang)
  );
}

/**
 * The best track for `language`, or null when none exists and none can be translated.
 * `translationLanguages` (from the player) limits translation targets when it is known.
 */
export function chooseCaptionTrack(
  tracks: readonly CaptionTrack[],
  language: string,
  translationLanguages: readonly string[] = [],
): CaptionChoice | null {
  const manual = tracks.filter((t) => t.kind === "manual");
  const asr = tracks.filter((t) => t.kind === "asr");
  const native = inLanguage(manual, language) ?? inLanguage(asr, language);
  if (native) return { track: native, translateTo: null };

  const targets = translationLanguages.map(norm);
  const target = targets.length === 0
    ? primary(language)
    : translationLanguages.find((code) => norm(code) === norm(language)) ??
      translationLanguages.find((code) => norm(code) === primary(language)) ??
      null;
  if (!target) return null;
  const source = manual.find((t) => t.isTranslatable) ?? asr.find((t) => t.isTranslatable);
  return source ? { track: source, translateTo: target } : null;
}

const YOUTUBE_HOST = /(^|\.)youtube\.com$/i;

/**
 * The URL to fetch for a choice, as json3, under the operator's base URL: links to YouTube
 * found in its answers are rebased like the upstream itself (api.md §1), so a mirror or a
 * replay server stands in for caption fetches too. Relative links resolve against it.
 */
export function captionUrl(choice: CaptionChoice, baseUrl: string): string | null {
  let url: URL;
  try {
    url = new URL(choice.track.baseUrl, baseUrl);
  } catch {
    return null;
  }
  if (YOUTUBE_HOST.test(url.hostname)) url = rebase(url, baseUrl);
  url.searchParams.set("fmt", "json3");
  if (choice.translateTo) url.searchParams.set("tlang", choice.translateTo);
  return url.href;
}

/** Replaces scheme, host, port and path prefix with the base URL's, keeping path and query. */
export function rebase(url: URL, baseUrl: string): URL {
  const base = new URL(baseUrl);
  const prefix = base.pathname.replace(/\/+$/, "");
  return new URL(prefix + url.pathname + url.search, base.origin);
}

/**
 * `exp=xpe` marks a track that needs a PO token (proof of origin); without one timedtext
 * answers an empty body. Such a track is treated as unavailable.
 */
export function needsPoToken(trackUrl: string): boolean {
  const query = trackUrl.split("?")[1] ?? "";
  return new URLSearchParams(query).getAll("exp").some((value) => value.split(",").includes("xpe"));
}
