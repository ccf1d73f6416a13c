; Written for our tests (see chat.scm): the "> Context:" block under a heading (@context)
; and its "> - item" lines (@context_item), with the heading's text as @role.
(section
  (atx_heading
    (atx_h2_marker)
    heading_content: (_) @role)
  ((block_quote
    (list
      (list_item) @context_item)*) @context)?)
