// Command gotemplate renders a corpus of templates with Go's own
// text/template (missingkey=error) and the keeper's helper functions
// (funcs.go), so the TypeScript engine can be compared with it.
//
// Input on stdin: a JSON array of {"name", "template", "data"}.
// Output on stdout: a JSON array of {"name", "ok", "output", "error"}.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"text/template"
)

type testCase struct {
	Name     string          `json:"name"`
	Template string          `json:"template"`
	Data     json.RawMessage `json:"data"`
}

type result struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Output string `json:"output"`
	Error  string `json:"error,omitempty"`
}

// convert turns json.Number into int when the text is an integer and into
// float64 otherwise, matching the TypeScript engine's int/float rule.
func convert(v interface{}) interface{} {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return int(i)
		}
		f, _ := x.Float64()
		return f
	case map[string]interface{}:
		for k, e := range x {
			x[k] = convert(e)
		}
		return x
	case []interface{}:
		for i, e := range x {
			x[i] = convert(e)
		}
		return x
	}
	return v
}

func run(c testCase) result {
	r := result{Name: c.Name}
	var data interface{}
	dec := json.NewDecoder(bytes.NewReader(c.Data))
	dec.UseNumber()
	if err := dec.Decode(&data); err != nil {
		r.Error = "bad data: " + err.Error()
		return r
	}
	data = convert(data)
	t, err := template.New("corpus.tmpl").Option("missingkey=error").Funcs(helperFuncs()).Parse(c.Template)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	var out bytes.Buffer
	if err := t.Execute(&out, data); err != nil {
		r.Error = err.Error()
		r.Output = out.String()
		return r
	}
	r.OK = true
	r.Output = out.String()
	return r
}

func main() {
	var cases []testCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintln(os.Stderr, "reading corpus:", err)
		os.Exit(2)
	}
	results := make([]result, 0, len(cases))
	for _, c := range cases {
		results = append(results, run(c))
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(results); err != nil {
		fmt.Fprintln(os.Stderr, "writing results:", err)
		os.Exit(2)
	}
}
