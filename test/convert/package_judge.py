"""Judges convert's packages with Python's standard library alone (zipfile, gzip/zlib, hashlib,
tarfile), none of which shares code with what wrote them.

  python3 package_judge.py wacz FILE.wacz     -> JSON: what the WACZ holds, and every fault found
  python3 package_judge.py inflate FILE DIR   -> every zip member, and every gzip member inside
                                                 one, written out as a file under DIR
"""
import hashlib
import json
import os
import sys
import tarfile
import zipfile
import zlib


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def gzip_members(data):
    """(offset, length, inflated) of each gzip member, one after the other."""
    members = []
    view = memoryview(data)
    at = 0
    while at < len(data):
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        parts = []
        read = at
        # Fed a piece at a time, so a long file of small members costs its length, not its square.
        while not inflater.eof:
            piece = view[read:read + 65536]
            if len(piece) == 0:
                raise ValueError("the gzip member at %d is cut short" % at)
            parts.append(inflater.decompress(piece))
            read += len(piece)
        length = read - at - len(inflater.unused_data)
        members.append((at, length, b"".join(parts)))
        at += length
    return members


def parse_warc(record):
    head, _, block = record.partition(b"\r\n\r\n")
    lines = head.decode("utf-8").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip()] = value.strip()
    length = int(headers["Content-Length"])
    return lines[0], headers, block[:length], block[length:]


def judge_wacz(path):
    faults = []
    out = {"faults": faults}
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        out["names"] = sorted(names)
        datapackage = z.read("datapackage.json")
        digest = json.loads(z.read("datapackage-digest.json"))
        if digest.get("path") != "datapackage.json" or digest.get("hash") != "sha256:" + sha256(datapackage):
            faults.append("datapackage-digest.json does not match datapackage.json")
        package = json.loads(datapackage)
        out["wacz_version"] = package.get("wacz_version")
        out["profile"] = package.get("profile")
        listed = set()
        for resource in package["resources"]:
            data = z.read(resource["path"])
            listed.add(resource["path"])
            if resource["hash"] != "sha256:" + sha256(data) or resource["bytes"] != len(data):
                faults.append("datapackage entry of %s does not match it" % resource["path"])
        for name in names:
            if name not in listed and name not in ("datapackage.json", "datapackage-digest.json"):
                faults.append("%s is not listed in datapackage.json" % name)
        warcs = {}
        for name in names:
            if name.startswith("archive/"):
                if z.getinfo(name).compress_type != zipfile.ZIP_STORED:
                    faults.append("%s is compressed in the zip" % name)
                warcs[name[len("archive/"):]] = z.read(name)
        # Every record: its own gzip member, WARC/1.1, with its digests.
        members = {}
        records = {"warcinfo": 0, "response": 0}
        for filename, data in warcs.items():
            for offset, length, inflated in gzip_members(data):
                version, headers, block, rest = parse_warc(inflated)
                if version != "WARC/1.1":
                    faults.append("record at %d is %s" % (offset, version))
                if rest != b"\r\n\r\n":
                    faults.append("record at %d does not end as a WARC record ends" % offset)
                kind = headers.get("WARC-Type")
                records[kind] = records.get(kind, 0) + 1
                if kind == "warcinfo":
                    out["warcinfo"] = block.decode("utf-8")
                    continue
                http, _, payload = block.partition(b"\r\n\r\n")
                if headers.get("WARC-Block-Digest") != "sha256:" + sha256(block):
                    faults.append("block digest of the record at %d" % offset)
                if headers.get("WARC-Payload-Digest") != "sha256:" + sha256(payload):
                    faults.append("payload digest of the record at %d" % offset)
                status = http.split(b"\r\n")[0].decode("latin-1")
                members[(filename, offset)] = {
                    "length": length,
                    "url": headers.get("WARC-Target-URI"),
                    "date": headers.get("WARC-Date"),
                    "digest": headers.get("WARC-Payload-Digest"),
                    "status": status,
                    "bounded": headers.get("Rabbit-Fetch-Time"),
                }
        out["records"] = records
        out["urls"] = sorted(m["url"] for m in members.values())
        out["statuses"] = sorted(set(m["status"] for m in members.values()))
        out["bounded"] = sum(1 for m in members.values() if m["bounded"])
        # The index: sorted, and each line pointing at a record of its URL and digest.
        lines = z.read("indexes/index.cdx").split(b"\n")
        if lines[-1] != b"":
            faults.append("index.cdx does not end in a newline")
        lines = lines[:-1]
        if lines != sorted(lines):
            faults.append("index.cdx is not sorted")
        pointed = set()
        for line in lines:
            urlkey, timestamp, fields = line.decode("utf-8").split(" ", 2)
            fields = json.loads(fields)
            key = (fields["filename"], int(fields["offset"]))
            member = members.get(key)
            if member is None or member["length"] != int(fields["length"]):
                faults.append("index line for %s points at no record" % fields["url"])
                continue
            if member["url"] != fields["url"] or member["digest"] != fields["digest"]:
                faults.append("index line for %s points at another record" % fields["url"])
            if len(timestamp) != 14 or not timestamp.isdigit():
                faults.append("index timestamp %s" % timestamp)
            pointed.add(key)
        if pointed != set(members):
            faults.append("%d records are not in the index" % len(set(members) - pointed))
        out["indexed"] = len(pointed)
        # The pages.
        pages = z.read("pages/pages.jsonl").decode("utf-8").strip().split("\n")
        out["pagesHeader"] = json.loads(pages[0])
        out["pages"] = [json.loads(line) for line in pages[1:]]
        urls = set(out["urls"])
        for page in out["pages"]:
            if page["url"] not in urls:
                faults.append("page %s has no record" % page["url"])
    return out


def inflate(path, into):
    """Every byte a reader could get out of the file: zip members, and gzip members in them."""
    def save(name, data):
        target = os.path.join(into, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                data = z.read(name)
                save(name, data)
                if data[:2] == b"\x1f\x8b":
                    for i, (_, _, inflated) in enumerate(gzip_members(data)):
                        save("%s.member-%d" % (name, i), inflated)
    else:
        with tarfile.open(path) as t:
            for member in t.getmembers():
                if member.isfile():
                    save(member.name, t.extractfile(member).read())


if __name__ == "__main__":
    if sys.argv[1] == "wacz":
        print(json.dumps(judge_wacz(sys.argv[2])))
    elif sys.argv[1] == "inflate":
        # inflate FILE INTO [FILE INTO...]: one process for several packages.
        for i in range(2, len(sys.argv), 2):
            inflate(sys.argv[i], sys.argv[i + 1])
