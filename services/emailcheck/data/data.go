// Package data embeds emailcheck's built-in lists (disposable domains, free
// providers, role accounts, typo targets, known top-level domains). Each
// file says where its facts come from; the format is one entry per line,
// '#' starts a comment. EMAILCHECK_LISTS_DIR can extend them at run time.
package data

import "embed"

// FS holds the *.txt lists.
//
//go:embed *.txt
var FS embed.FS
