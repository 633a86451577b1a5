"""Dashboard views (DESIGN.md §6), one module per page. Each view: form → service → render, with
the page's ``{% partialdef %}`` for htmx requests."""
