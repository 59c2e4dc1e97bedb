import { ProtoWriter } from "./protobuf.js";

/**
 * Event and Summary messages, by the field numbers of tensorflow/core/util/event.proto and
 * framework/summary.proto, and the hparams plugin's (tensorboard/plugins/hparams/*.proto).
 *
 * Event: wall_time 1 (double), step 2 (int64), file_version 3, summary 5.
 * Summary: value 1. Summary.Value: tag 1, simple_value 2 (float), tensor 8, metadata 9.
 * SummaryMetadata: plugin_data 1 { plugin_name 1, content 2 }.
 * TensorProto: dtype 1 (DT_STRING = 7), tensor_shape 2 { dim 2 { size 1 } }, string_val 8.
 */
function event(wallTime: number, step: number, fill: (w: ProtoWriter) => void): Uint8Array {
  const w = new ProtoWriter().double(1, wallTime).int(2, step);
  fill(w);
  return w.finish();
}

export function fileVersionEvent(wallTime: number): Uint8Array {
  return event(wallTime, 0, (w) => w.string(3, "brain.Event:2"));
}

export type SummaryValue = { tag: string; scalar: number } | { tag: string; text: string };

/** One Event holding every value of one log call at one step. */
export function summaryEvent(wallTime: number, step: number, values: readonly SummaryValue[]): Uint8Array {
  return event(wallTime, step, (w) =>
    w.message(5, (s) => {
      for (const v of values) s.message(1, (val) => ("scalar" in v ? scalarValue(val, v.tag, v.scalar) : textValue(val, v.tag, v.text)));
    }),
  );
}

function scalarValue(w: ProtoWriter, tag: string, value: number): void {
  w.string(1, tag).float(2, value);
}

/** The text plugin's form: a rank-1 string tensor of one element, plugin "text" (TextPluginData version 0 is empty). */
function textValue(w: ProtoWriter, tag: string, text: string): void {
  w.string(1, tag)
    .message(9, (m) => m.message(1, (p) => p.string(1, "text")))
    .message(8, (t) =>
      t
        .int(1, 7)
        .message(2, (shape) => shape.message(2, (dim) => dim.int(1, 1)))
        .string(8, text),
    );
}

const HPARAMS_VERSION = 0;

/** A summary value that only carries hparams plugin data (as torch.utils.tensorboard writes them). */
function hparamsEvent(wallTime: number, tag: string, pluginData: (w: ProtoWriter) => void): Uint8Array {
  const content = new ProtoWriter().int(1, HPARAMS_VERSION);
  pluginData(content);
  const bytes = content.finish();
  return event(wallTime, 0, (w) =>
    w.message(5, (s) => s.message(1, (v) => v.string(1, tag).message(9, (m) => m.message(1, (p) => p.string(1, "hparams").bytes(2, bytes))))),
  );
}

export type HParamValue = number | string | boolean;

/** google.protobuf.Value: number_value 2, string_value 3, bool_value 4. */
function protoValue(w: ProtoWriter, v: HParamValue): void {
  if (typeof v === "number") w.double(2, v);
  else if (typeof v === "string") w.string(3, v);
  else w.int(4, v);
}

/** HParamsPluginData.session_start_info (3): hparams 1 (map<string, Value>), group_name 4, start_time_secs 5. */
export function sessionStartEvent(wallTime: number, hparams: ReadonlyMap<string, HParamValue>, groupName: string): Uint8Array {
  return hparamsEvent(wallTime, "_hparams_/session_start_info", (w) =>
    w.message(3, (ssi) => {
      for (const [k, v] of hparams) ssi.message(1, (entry) => entry.string(1, k).message(2, (val) => protoValue(val, v)));
      ssi.string(4, groupName).double(5, wallTime);
    }),
  );
}

/**
 * HParamsPluginData.experiment (2): hparam_infos 4 { name 1, type 4 }, metric_infos 5 { name 1 { tag 2 } }.
 * DataType: STRING 1, BOOL 2, FLOAT64 3.
 */
export function experimentEvent(wallTime: number, hparams: ReadonlyMap<string, HParamValue>, metricTags: readonly string[]): Uint8Array {
  return hparamsEvent(wallTime, "_hparams_/experiment", (w) =>
    w.message(2, (exp) => {
      for (const [k, v] of hparams) exp.message(4, (info) => info.string(1, k).int(4, typeof v === "string" ? 1 : typeof v === "boolean" ? 2 : 3));
      for (const tag of metricTags) exp.message(5, (info) => info.message(1, (name) => name.string(2, tag)));
    }),
  );
}

/** HParamsPluginData.session_end_info (4): status 1 (STATUS_SUCCESS = 1), end_time_secs 2. */
export function sessionEndEvent(wallTime: number): Uint8Array {
  return hparamsEvent(wallTime, "_hparams_/session_end_info", (w) => w.message(4, (sei) => sei.int(1, 1).double(2, wallTime)));
}
