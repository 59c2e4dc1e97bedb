/**
 * A checker written from the Trace Event Format specification (Google's "Trace Event Format"
 * document that chrome://tracing and Perfetto follow), for the events ringtorch writes:
 * - the JSON Array Format: the file is an array of event objects (its closing `]` may be missing);
 * - every event has `name` (string), `ph` (phase), `pid` and `tid` (integers);
 * - "X" complete events have `ts` and `dur` in microseconds (numbers, dur ≥ 0);
 * - "i" instant events have `ts` and a scope `s` of "g", "p" or "t";
 * - "M" metadata events are named process_name, process_labels, process_sort_index, thread_name
 *   or thread_sort_index and carry `args` (`name`, `labels` or `sort_index`).
 * `args`, where present, is an object. Returns the events.
 */
export interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  ts: number;
  dur: number;
  s?: string;
  args?: Record<string, unknown>;
}

const METADATA_ARG: Record<string, string> = {
  process_name: "name",
  process_labels: "labels",
  process_sort_index: "sort_index",
  thread_name: "name",
  thread_sort_index: "sort_index",
};

export function parseTraceArray(text: string): unknown[] {
  const body = text.trimEnd();
  const parsed = JSON.parse(body.endsWith("]") ? body : body.replace(/,\s*$/, "") + "]") as unknown;
  if (!Array.isArray(parsed)) throw new Error("a JSON Array Format trace is an array of events");
  return parsed;
}

export function checkTraceEvents(events: unknown[]): TraceEvent[] {
  events.forEach((e, i) => {
    const where = `event ${i} ${JSON.stringify(e)}`;
    if (typeof e !== "object" || e === null || Array.isArray(e)) throw new Error(`${where}: not an object`);
    const ev = e as Record<string, unknown>;
    if (typeof ev.name !== "string") throw new Error(`${where}: name must be a string`);
    if (!Number.isInteger(ev.pid) || !Number.isInteger(ev.tid)) throw new Error(`${where}: pid and tid must be integers`);
    if (ev.args !== undefined && (typeof ev.args !== "object" || ev.args === null || Array.isArray(ev.args))) throw new Error(`${where}: args must be an object`);
    switch (ev.ph) {
      case "X":
        if (typeof ev.ts !== "number" || !Number.isFinite(ev.ts)) throw new Error(`${where}: ts must be a number of µs`);
        if (typeof ev.dur !== "number" || !(ev.dur >= 0)) throw new Error(`${where}: dur must be a non-negative number of µs`);
        break;
      case "i":
        if (typeof ev.ts !== "number" || !Number.isFinite(ev.ts)) throw new Error(`${where}: ts must be a number of µs`);
        if (ev.s !== undefined && !["g", "p", "t"].includes(ev.s as string)) throw new Error(`${where}: instant scope must be g, p or t`);
        break;
      case "M": {
        const key = METADATA_ARG[ev.name];
        if (key === undefined) throw new Error(`${where}: unknown metadata event`);
        if (!ev.args || !(key in (ev.args as object))) throw new Error(`${where}: metadata ${ev.name} needs args.${key}`);
        break;
      }
      default:
        throw new Error(`${where}: phase ${JSON.stringify(ev.ph)} is not one ringtorch writes (X, i, M)`);
    }
  });
  return events as TraceEvent[];
}
