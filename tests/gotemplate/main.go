// Renders a notifications template the way Argo CD's notifications controller does: Go text/template with the
// Sprig function map (notifications-engine, pkg/services/webhook.go: texttemplate.New(name).Funcs(f).Parse(body)).
// Reads {"template": "...", "vars": {"app": {...}, "context": {...}}} on stdin, writes the rendered text on stdout.
//
// Built by tests/test_notifications.py in GOPATH mode against Debian's golang-github-masterminds-sprig-dev, which
// installs Sprig v3 under the import path github.com/Masterminds/sprig (no module download).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"text/template"

	sprig "github.com/Masterminds/sprig"
)

type input struct {
	Template string                 `json:"template"`
	Vars     map[string]interface{} `json:"vars"`
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintln(os.Stderr, "input:", err)
		os.Exit(2)
	}
	tmpl, err := template.New("argo-why-drift").Funcs(sprig.TxtFuncMap()).Parse(in.Template)
	if err != nil {
		fmt.Fprintln(os.Stderr, "parse:", err)
		os.Exit(3)
	}
	if err := tmpl.Execute(os.Stdout, in.Vars); err != nil {
		fmt.Fprintln(os.Stderr, "execute:", err)
		os.Exit(4)
	}
}
