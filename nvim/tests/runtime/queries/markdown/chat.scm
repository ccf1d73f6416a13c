; Written for our tests (not CodeCompanion's file): the copy of codecompanion.nvim under
; shared/clients ships without its queries/ folder. Its chat parser asks markdown for a
; "chat" query: each H2 heading's text as @role, the blocks under it as @content.
(section
  (atx_heading
    (atx_h2_marker)
    heading_content: (_) @role)
  ([
    (paragraph)
    (fenced_code_block)
    (list)
    (block_quote)
    (indented_code_block)
    (thematic_break)
  ] @content)*)
