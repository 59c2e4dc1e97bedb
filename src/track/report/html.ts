import { CLIENT_SCRIPT } from "./client.js";
import type { CollectedRun } from "./collect.js";

const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
/** Points kept per series: a long run is thinned evenly (its last point always kept) so the page stays small. */
const MAX_POINTS = 2000;

interface Plot {
  id: string;
  title: string;
  xLabel: string;
  series: { label: string; color: string; points: [number, number][] }[];
}

function thin(points: [number, number][]): [number, number][] {
  if (points.length <= MAX_POINTS) return points;
  const stride = points.length / MAX_POINTS;
  const out: [number, number][] = [];
  for (let i = 0; i < MAX_POINTS - 1; i++) out.push(points[Math.floor(i * stride)]);
  out.push(points[points.length - 1]);
  return out;
}

function esc(v: unknown): string {
  const s = typeof v === "string" ? v : JSON.stringify(v) ?? "";
  return s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);
}

function cell(v: unknown): string {
  if (typeof v === "number") return esc(Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6))));
  return v === undefined ? "" : esc(v);
}

function flatten(obj: Record<string, unknown>, prefix = "", out: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [k, v] of Object.entries(obj)) {
    if (v && typeof v === "object" && !Array.isArray(v)) flatten(v as Record<string, unknown>, `${prefix}${k}.`, out);
    else out[prefix + k] = v;
  }
  return out;
}

/** Rows = keys, columns = runs; rows whose values differ between runs are marked. */
function table(runs: CollectedRun[], labels: string[], rows: Record<string, unknown>[], cls: string): string {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))].sort();
  if (keys.length === 0) return `<p class="empty">none</p>`;
  const head = `<tr><th></th>${labels.map((l) => `<th>${esc(l)}</th>`).join("")}</tr>`;
  const body = keys
    .map((k) => {
      const vals = rows.map((r) => r[k]);
      const differs = runs.length > 1 && new Set(vals.map((v) => JSON.stringify(v))).size > 1;
      return `<tr${differs ? ' class="differs"' : ""}><th>${esc(k)}</th>${vals.map((v) => `<td>${cell(v)}</td>`).join("")}</tr>`;
    })
    .join("");
  return `<div class="scroll"><table class="${cls}">${head}${body}</table></div>`;
}

/** The whole report page: every metric plotted with one line per run (rank), config and summary side by side. */
export function renderReport(root: string, runs: CollectedRun[], generatedAt = new Date()): string {
  const groups = new Set(runs.map((r) => r.info.group));
  const labels = runs.map((r) => (groups.size > 1 ? `${r.info.group}/${r.info.name}` : r.info.name));
  const color = (i: number) => PALETTE[i % PALETTE.length];
  const plots: Plot[] = [];
  const section = (names: string[], pick: (r: CollectedRun) => Record<string, [number, number][]>, xLabel: (name: string) => string, prefix: string) =>
    names.map((name) => {
      const plot: Plot = {
        id: `${prefix}-${plots.length}`,
        title: name,
        xLabel: xLabel(name),
        series: runs.flatMap((r, i) => (pick(r)[name]?.length ? [{ label: labels[i], color: color(i), points: thin(pick(r)[name]) }] : [])),
      };
      plots.push(plot);
      return `<figure class="card"><figcaption>${esc(name)}</figcaption><div class="plot" id="${plot.id}"></div></figure>`;
    });
  const metricNames = [...new Set(runs.flatMap((r) => Object.keys(r.series)))].sort();
  const axisOf = (name: string) => runs.find((r) => r.axes[name])?.axes[name] ?? "_step";
  const metricCards = section(metricNames, (r) => r.series, (n) => (axisOf(n) === "_step" ? "step" : axisOf(n)), "m");
  const systemNames = [...new Set(runs.flatMap((r) => Object.keys(r.system)))].sort();
  const systemCards = section(systemNames, (r) => r.system, () => "seconds", "s");
  const runRows = runs
    .map((r, i) => {
      const last = Object.values(r.series).reduce((m, pts) => Math.max(m, pts.length), 0);
      const runtime = typeof r.summary._runtime === "number" ? `${r.summary._runtime.toFixed(1)} s` : "";
      return `<tr><td><i class="swatch" style="background:${color(i)}"></i>${esc(labels[i])}</td><td>${esc(r.info.id)}</td><td>${esc(r.info.group)}</td><td>${r.info.rank}/${r.info.worldSize}</td><td class="${r.status}">${r.status}</td><td>${last}</td><td>${runtime}</td><td>${r.info.resumes.length}</td><td>${esc(r.info.host)}</td><td>${esc(r.path)}</td></tr>`;
    })
    .join("");
  const textNames = [...new Set(runs.flatMap((r) => Object.keys(r.texts)))].sort();
  const texts = textNames
    .map((name) => {
      const rows = runs.flatMap((r, i) => (r.texts[name] ?? []).slice(-20).map(([s, t]) => `<tr><td>${esc(labels[i])}</td><td>${s}</td><td><pre>${esc(t)}</pre></td></tr>`));
      return `<h3>${esc(name)}</h3><table class="texts"><tr><th>run</th><th>step</th><th>text</th></tr>${rows.join("")}</table>`;
    })
    .join("");
  const summaries = runs.map((r) => Object.fromEntries(Object.entries(r.summary).filter(([k]) => !k.startsWith("_"))));
  const json = JSON.stringify({ plots }).replace(/</g, "\\u003c");
  const title = `ringtorch report: ${[...groups].join(", ")}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">
<title>${esc(title)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:0 24px 40px;color:#222;background:#fafafa}
h1{font-size:20px;margin:18px 0 4px}h2{font-size:16px;margin:26px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.meta{color:#666}.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(440px,1fr));gap:14px}
.card{background:#fff;border:1px solid #e2e2e2;border-radius:6px;margin:0;padding:8px 10px}figcaption{font-weight:600;margin-bottom:4px}
.chart{width:100%;height:auto;display:block}.chart text{font-size:11px;fill:#555}.chart .grid{stroke:#eee}.chart .axis{stroke:#999}
.chart .line{fill:none;stroke-width:1.6}.chart .cursor{stroke:#888;stroke-dasharray:3 3}.chart .xlabel{fill:#888}
.tip{min-height:1.3em;font-size:12px;color:#444}.legend span{cursor:pointer;margin-right:12px;font-size:12px;white-space:nowrap}
.legend span.off{opacity:.35}.legend i,.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;vertical-align:-1px}
table{border-collapse:collapse;background:#fff;font-size:13px}td,th{border:1px solid #e2e2e2;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3;font-weight:600}tr.differs th{background:#fff3c4}.scroll{overflow-x:auto}pre{margin:0;white-space:pre-wrap}
.running{color:#2a7}.stopped{color:#c33}.finished{color:#555}.empty{color:#888}
</style></head>
<body>
<h1>${esc(title)}</h1>
<div class="meta">${runs.length} run${runs.length === 1 ? "" : "s"} under ${esc(root)} · generated ${esc(generatedAt.toISOString())} · runs still going show what they had written then; generate again to update</div>
<h2>Runs</h2>
<div class="scroll"><table><tr><th>run</th><th>id</th><th>group</th><th>rank</th><th>status</th><th>points</th><th>runtime</th><th>resumes</th><th>host</th><th>folder</th></tr>${runRows}</table></div>
<h2>Metrics</h2>
<div class="grid">${metricCards.join("\n") || '<p class="empty">no numeric metrics yet</p>'}</div>
<h2>System</h2>
<div class="grid">${systemCards.join("\n") || '<p class="empty">no system metrics</p>'}</div>
<h2>Summary</h2>
${table(runs, labels, summaries, "summary")}
<h2>Config</h2>
${table(runs, labels, runs.map((r) => flatten(r.info.config)), "config")}
${texts ? `<h2>Text</h2>${texts}` : ""}
<script type="application/json" id="report-data">${json}</script>
<script>${CLIENT_SCRIPT}</script>
</body></html>
`;
}
