"""Fixtures for test/data/text_readers.test.ts: a CSV read by Python's csv module and a Parquet
file written by pyarrow, with the records each holds.

    ~/.venvs/peer/bin/python tools/text/make_data_fixtures.py   (pip install pyarrow first)
"""
import csv
import io
import json

import pyarrow as pa
import pyarrow.parquet as pq

OUT = "test/fixtures/text"

# Quotes, delimiters and newlines (LF and CRLF) inside fields, escaped quotes, UTF-8, empty
# fields, and blank lines between records (which the readers skip).
CSV = (
    'id,text,label\r\n'
    '1,"Hello, world",pos\r\n'
    '2,"She said ""hi"" twice",neg\n'
    '\n'
    '3,"line one\nline two\r\nline three",pos\n'
    '4,Ünïcödé 東京 🙂,neg\n'
    '5,,pos\n'
    '6,"",neg\n'
    '7,"ends with quote """,pos'
)


def main():
    with open(f"{OUT}/sample.csv", "w", encoding="utf-8", newline="") as f:
        f.write(CSV)
    rows = [r for r in csv.DictReader(io.StringIO(CSV, newline="")) if any(v != "" for v in r.values())]
    table = pa.table({
        "id": pa.array(list(range(1, 1001)), pa.int32()),
        "text": pa.array([f"review {i}: " + ("great" if i % 3 else "bad ünïcode") for i in range(1, 1001)]),
        "label": pa.array([i % 3 != 0 for i in range(1, 1001)]),
        "score": pa.array([i / 8 for i in range(1, 1001)], pa.float64()),
    })
    pq.write_table(table, f"{OUT}/sample.parquet", row_group_size=300, compression="snappy")
    with open(f"{OUT}/sample.expected.json", "w", encoding="utf-8") as f:
        json.dump({"csv": rows, "parquet": table.to_pylist()}, f, ensure_ascii=False)


if __name__ == "__main__":
    main()
