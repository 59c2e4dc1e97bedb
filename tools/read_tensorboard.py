"""Reads ringtorch's TensorBoard event files with TensorBoard's own EventAccumulator (not run in CI).

    ~/.venvs/peer/bin/python tools/read_tensorboard.py <run dir containing events.out.tfevents.*>

Prints every scalar series, every text value and the hparams plugin data it finds, and exits
non-zero when TensorBoard finds no scalars (it skips a file it cannot parse, so silence is failure).
"""
import sys

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams import plugin_data_pb2

run_dir = sys.argv[1]
acc = EventAccumulator(run_dir, size_guidance={"scalars": 0, "tensors": 0})
acc.Reload()
tags = acc.Tags()
print("tags:", {k: v for k, v in tags.items() if v})
for tag in tags["scalars"]:
    print("scalar", tag, [(e.step, round(e.value, 6)) for e in acc.Scalars(tag)])
for tag in tags["tensors"]:
    for e in acc.Tensors(tag):
        print("tensor", tag, e.step, [s.decode() for s in e.tensor_proto.string_val])
for tag, content in acc.PluginTagToContent("hparams").items():
    data = plugin_data_pb2.HParamsPluginData.FromString(content)
    print("hparams", tag, str(data).replace("\n", " "))
if not tags["scalars"]:
    sys.exit("TensorBoard found no scalars in " + run_dir)
