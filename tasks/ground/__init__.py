"""What every stage stands on: workspace layout and safe paths (`workspace`), notes and
frontmatter (`notes`), Markdown links and blocks (`markdown`, the one mistletoe import), file
operations that keep links whole (`fileops`), the workspace lock (`lock`), the inbox (`events`),
model calls (`llm`, the one litellm import; `local_embeddings`), a search's vector product on
one BLAS thread (`blas`), keyword tokens (`tokenize`) and token counts (`tokens`). Import the
modules directly; this package exports nothing itself.
"""
