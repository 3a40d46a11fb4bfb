// Package docpage is a reference page as data — sections of paragraphs,
// definition lists and literal blocks — written out as a man page (roff,
// man(7)) or as Markdown. The generators of syslet's man pages and
// reference docs build one Page from the definitions they document (the
// command table, the JSON Schema, the rule table, webhookd's flags and
// configuration) and write both forms, so the two never disagree.
//
// Inline markup is one thing: `code`, set in bold in a man page and as
// code in Markdown. Everything else is plain text, escaped for each form.
//
// Layer: ground. It imports only the standard library.
package docpage
