"""Reads callpipe's analysis tables back with pyarrow, independently of the writer (issue 17).

Usage: python read_tables.py <json spec> ; the spec names either a local root or an S3 location:
{"root": "/dir/tables"} or {"s3": {"endpoint": "127.0.0.1:8333", "scheme": "http", "region": "...",
"access_key": "...", "secret_key": "...", "bucket": "...", "prefix": "tables/"}, "tables": ["calls", ...]}

Prints one JSON object: per table, the Arrow schema (name -> type string), the files read (every
*.parquet under the table's folder, each opened on its own too), and the rows with `dt` from the Hive
partition typed as a date.
"""
import datetime
import json
import sys

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq


def plain(value):
    if isinstance(value, datetime.datetime):
        return value.isoformat(timespec="milliseconds")
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, list):
        # Arrow maps come back as lists of (key, value) tuples.
        if value and isinstance(value[0], tuple) and len(value[0]) == 2:
            return {k: plain(v) for k, v in value}
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def main():
    spec = json.loads(sys.argv[1])
    if "s3" in spec:
        s3 = spec["s3"]
        fs = pafs.S3FileSystem(
            access_key=s3["access_key"],
            secret_key=s3["secret_key"],
            endpoint_override=s3["endpoint"],
            scheme=s3["scheme"],
            region=s3["region"],
        )
        root = f"{s3['bucket']}/{s3['prefix'].rstrip('/')}"
    else:
        fs = pafs.LocalFileSystem()
        root = spec["root"].rstrip("/")
    partitioning = ds.partitioning(pa.schema([("dt", pa.date32())]), flavor="hive")
    out = {}
    for table in spec["tables"]:
        base = f"{root}/{table}"
        infos = fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
        files = sorted(i.path for i in infos if i.type == pafs.FileType.File and i.path.endswith(".parquet"))
        per_file = {}
        for path in files:
            meta = pq.ParquetFile(path, filesystem=fs).metadata
            kv = {k.decode(): v.decode() for k, v in (meta.metadata or {}).items()}
            codecs = sorted({meta.row_group(g).column(c).compression for g in range(meta.num_row_groups) for c in range(meta.num_columns)})
            per_file[path[len(root) + 1:]] = {"rows": meta.num_rows, "codecs": codecs, "table": kv.get("callpipe.table"), "schema_version": kv.get("callpipe.schema_version")}
        if not files:
            out[table] = {"files": {}, "schema": {}, "rows": []}
            continue
        dataset = ds.dataset(base, format="parquet", partitioning=partitioning, filesystem=fs)
        t = dataset.to_table()
        out[table] = {
            "files": per_file,
            "schema": {f.name: str(f.type) for f in t.schema},
            "rows": [{k: plain(v) for k, v in row.items()} for row in t.to_pylist()],
        }
    print(json.dumps(out, ensure_ascii=False))


main()
