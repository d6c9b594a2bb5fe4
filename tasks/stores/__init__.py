"""I/O adapters, one module per medium: workspace files (`files`), LanceDB tables (`lance`), the
search snapshot with BM25 (`keyword`). Import the modules directly."""
