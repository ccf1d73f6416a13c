; Written for our tests (see chat.scm): the H2 headings, where the token count is drawn.
(section
  (atx_heading
    (atx_h2_marker)
    heading_content: (_) @role))
