"""The work of memory-flows as plain typed functions, one package per stage of the loop.

`capture` -> `index` -> `dream` -> `recall`, plus `evaluate`; every stage stands on `ground`
(workspace layout and paths, notes and links, file operations, lock, events, model calls) and
`stores` (one adapter per medium). A stage imports another stage only through the names its
package `__init__` exports; nothing here imports prefect.
"""
