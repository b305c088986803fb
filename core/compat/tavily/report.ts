/** A native research answer as the markdown report and numbered sources Tavily's research returns. */

export interface NativeResearch {
  meta: Record<string, unknown>;
  report: { summary: string; findings: Array<{ text: string; citations: string[] }> };
  sources: Array<{ id: string; title: string; url: string }>;
}

/** `[S3]` → `[3]`: Tavily's numbered citations, which index `sources`. */
const numbered = (text: string, index: Map<string, number>) => text.replace(/\[(S\d+)\]/g, (m, id: string) => (index.has(id) ? `[${index.get(id)}]` : m));

export function reportMarkdown(res: NativeResearch): { content: string; sources: Array<{ title: string; url: string }> } {
  const index = new Map(res.sources.map((s, i) => [s.id, i + 1]));
  const findings = res.report.findings.map((f) => `- ${numbered(f.text, index)} ${f.citations.map((id) => `[${index.get(id) ?? id}]`).join("")}`);
  const parts = [numbered(res.report.summary, index)];
  if (findings.length) parts.push("## Findings", findings.join("\n"));
  if (res.sources.length) parts.push("## Sources", res.sources.map((s, i) => `${i + 1}. [${s.title}](${s.url})`).join("\n"));
  return { content: parts.join("\n\n"), sources: res.sources.map((s) => ({ title: s.title, url: s.url })) };
}
