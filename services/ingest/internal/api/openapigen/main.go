// Command openapigen writes ingest's OpenAPI document, api.BuildOpenAPI's
// output, to openapi.json in the current directory (go generate runs it in
// the api package).
package main

import (
	"fmt"
	"os"

	"github.com/surveyor/surveyor/services/ingest/internal/api"
)

func main() {
	doc, err := api.BuildOpenAPI()
	if err == nil {
		err = os.WriteFile("openapi.json", doc, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapigen:", err)
		os.Exit(1)
	}
}
