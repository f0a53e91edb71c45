"""Rewrites a WACZ with Python's zipfile, changed as one tampering says: wacz_tamper.py SRC OUT KIND.

Each tampering but `extra-file` brings datapackage.json's sha256 and size of each file, and
datapackage-digest.json, in line with what it changed, so only the change itself is wrong.
"""
import hashlib, json, sys, zipfile

src, out, kind = sys.argv[1:4]
zin = zipfile.ZipFile(src)
infos = {i.filename: i for i in zin.infolist()}
files = {name: zin.read(name) for name in infos}


def index_lines(change):
    lines = files["indexes/index.cdx"].decode("utf-8").split("\n")
    files["indexes/index.cdx"] = "\n".join(change(lines)).encode("utf-8")


if kind == "garbage-index-line":
    index_lines(lambda lines: ["garbage"] + lines)
elif kind == "number-offset":
    index_lines(lambda lines: [lines[0].replace('"offset":"', '"offset":').replace('","filename"', ',"filename"')] + lines[1:])
elif kind == "resources-not-a-list":
    files["datapackage.json"] = b'{"resources": 5}'
elif kind == "warc-removed":
    del files["archive/data.warc.gz"]
elif kind == "extra-file":
    infos["extra.txt"] = zipfile.ZipInfo("extra.txt")
    files["extra.txt"] = b"not listed"
else:
    raise SystemExit("no tampering " + kind)

if kind != "extra-file":
    package = json.loads(files["datapackage.json"])
    if isinstance(package.get("resources"), list):
        kept = []
        for resource in package["resources"]:
            if resource["path"] in files:
                data = files[resource["path"]]
                resource["hash"] = "sha256:" + hashlib.sha256(data).hexdigest()
                resource["bytes"] = len(data)
                kept.append(resource)
        package["resources"] = kept
        files["datapackage.json"] = json.dumps(package).encode("utf-8")
    digest = {"path": "datapackage.json", "hash": "sha256:" + hashlib.sha256(files["datapackage.json"]).hexdigest()}
    files["datapackage-digest.json"] = json.dumps(digest).encode("utf-8")

with zipfile.ZipFile(out, "w") as zout:
    for name, data in files.items():
        zout.writestr(infos.get(name, zipfile.ZipInfo(name)), data)
