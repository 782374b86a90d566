"""Raw rows (``_rows.message_to_raw_row``) as one Arrow record batch per input partition.

PySpark's Python data sources may yield ``pyarrow.RecordBatch`` objects from ``read()``;
Spark then takes the batch as it is. A reader that yields tuples instead goes through
PySpark's generic conversion, a Python call per value (17 columns) plus a datetime per
timestamp, which cost the executors more than the driver spends receiving the message.
Building each column with one ``pyarrow.array`` call is a small fraction of that.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    DataType,
    IntegerType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from ._rows import READ_COLUMNS

_SPARK_TYPES: dict[str, DataType] = {
    "binary": BinaryType(),
    "string": StringType(),
    "int": IntegerType(),
    "timestamp": TimestampType(),
    "boolean": BooleanType(),
    "map<string,string>": MapType(StringType(), StringType()),
}

# READ_SCHEMA as Spark types, and the Arrow schema Spark checks a yielded batch against
# (pyspark.sql.worker.plan_data_source_read: the same conversion, session time zone UTC).
READ_STRUCT = StructType([StructField(name, _SPARK_TYPES[kind]) for name, kind in READ_COLUMNS])
ARROW_SCHEMA: pa.Schema = to_arrow_schema(READ_STRUCT, timezone="UTC")


def _column(values: Sequence[Any], kind: str, arrow_type: pa.DataType) -> pa.Array:
    if kind == "timestamp":
        # Raw rows hold epoch milliseconds, 0 for "not set" (see _rows.finish_row).
        return pa.array([ms * 1000 if ms else None for ms in values], arrow_type)
    return pa.array(values, arrow_type)


def raw_rows_to_batch(rows: Sequence[tuple[Any, ...]]) -> pa.RecordBatch:
    """Raw rows as one record batch with the columns of READ_COLUMNS."""
    columns: list[Sequence[Any]] = list(zip(*rows, strict=True)) if rows else []
    if not columns:
        columns = [()] * len(READ_COLUMNS)
    arrays = [
        _column(values, kind, field.type)
        for values, (_, kind), field in zip(columns, READ_COLUMNS, ARROW_SCHEMA, strict=True)
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=ARROW_SCHEMA)
