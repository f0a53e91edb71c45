"""Rewrites an archive with Python's zipfile, the manifest kept in line: package_craft.py SRC OUT SPEC_JSON.

SPEC: "add": entries added to the manifest's account files ({"path", "body", optional "source",
"contentType"}), each with its true sha256 and size; "set": {path: {field: value}} merged into the
manifest record of that path (a value of null removes the field). Everything else is copied as it is.
"""
import hashlib, json, sys, zipfile

src, out, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
zin = zipfile.ZipFile(src)
files = {i.filename: zin.read(i.filename) for i in zin.infolist()}
m = json.loads(files.pop("manifest.json"))
for add in spec.get("add", []):
    body = add["body"].encode("utf-8")
    files[add["path"]] = body
    m["files"].append({"path": add["path"], "source": add.get("source", "/rabbit/static/crafted"),
                       "sha256": hashlib.sha256(body).hexdigest(), "size": len(body),
                       "contentType": add.get("contentType", "text/plain"), "lastModified": None})
    m["stats"]["files"] += 1
    m["stats"]["bytes"] += len(body)
listings = [m["files"]] + [r["files"] for p in m["prototypes"].values() for r in p["revisions"].values()]
for listing in listings:
    for record in listing:
        for field, value in spec.get("set", {}).get(record["path"], {}).items():
            if value is None:
                record.pop(field, None)
            else:
                record[field] = value
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
    for name, data in files.items():
        zout.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data)
    zout.writestr(zipfile.ZipInfo("manifest.json", (2020, 1, 1, 0, 0, 0)), json.dumps(m).encode("utf-8"))
