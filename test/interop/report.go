package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// row is one line of the pass/fail table.
type row struct {
	tool    string
	role    string // "gorxe->rxe" means gorxe is the client, rxe the server
	options string
	pass    bool
	seconds float64
	capture string // packet counts and ICRC verdict
	detail  string // why it failed, with the tools' output
}

// printTable writes the pass/fail table, then the details of every failure.
func printTable(w io.Writer, rows []row) (passed, failed int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tROLE (client->server)\tOPTIONS\tRESULT\tSECONDS\tCAPTURE")
	for _, r := range rows {
		res := "PASS"
		if r.pass {
			passed++
		} else {
			res = "FAIL"
			failed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f\t%s\n", r.tool, r.role, r.options, res, r.seconds, r.capture)
	}
	tw.Flush()
	for _, r := range rows {
		if r.pass {
			continue
		}
		fmt.Fprintf(w, "\n==== FAIL %s %s %s\n%s\n", r.tool, r.role, r.options, strings.TrimRight(r.detail, "\n"))
	}
	return passed, failed
}

// tail keeps the last n bytes of s, marking the cut.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "[... " + fmt.Sprint(len(s)-n) + " bytes cut ...]\n" + s[len(s)-n:]
}
