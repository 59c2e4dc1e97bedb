"""A .po with contexts, plurals and UTF-8 compiled by GNU msgfmt (little and big endian), and
the catalog Python's gettext module reads from it, for test/data/prepare.test.ts.

    ~/.venvs/peer/bin/python tools/text/make_mo_fixtures.py   (apt-get install -y gettext)
"""
import gettext
import json
import subprocess

OUT = "test/fixtures/text"
PO = r'''msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\n"

msgid "Hello, world"
msgstr "Hola, mundo"

msgid "%d file removed"
msgid_plural "%d files removed"
msgstr[0] "%d archivo eliminado"
msgstr[1] "%d archivos eliminados"

msgctxt "menu"
msgid "Open"
msgstr "Abrir"

msgid "Open"
msgstr "Abierto"

msgid "line one\nline two"
msgstr "línea uno\nlínea dos"

msgid "Untranslated"
msgstr ""

msgid "naïve café ☕"
msgstr "café ingenuo ☕"
'''

with open(f"{OUT}/sample.po", "w", encoding="utf-8") as f:
    f.write(PO)
subprocess.check_call(["msgfmt", "-o", f"{OUT}/sample.mo", f"{OUT}/sample.po"])
subprocess.check_call(["msgfmt", "--endianness=big", "-o", f"{OUT}/sample_be.mo", f"{OUT}/sample.po"])
with open(f"{OUT}/sample.mo", "rb") as f:
    t = gettext.GNUTranslations(f)
catalog = {}
for k, v in t._catalog.items():
    key = k if isinstance(k, str) else f"{k[0]}[{k[1]}]"
    catalog[key] = v
with open(f"{OUT}/sample_mo.expected.json", "w", encoding="utf-8") as f:
    json.dump({"catalog": catalog, "charset": t.charset()}, f, ensure_ascii=False)
