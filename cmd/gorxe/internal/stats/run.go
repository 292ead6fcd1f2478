package stats

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// clearScreen moves the cursor home and clears the terminal (ANSI), so each refresh redraws.
const clearScreen = "\x1b[H\x1b[2J"

// Run scrapes o.URL and prints it: once with o.Once, else every o.Interval until ctx ends (which
// is no failure). A scrape that fails ends the run with its error.
func Run(ctx context.Context, o Options, stdout io.Writer) error {
	client := &http.Client{Timeout: max(o.Interval, 5*time.Second)}
	defer client.CloseIdleConnections()
	var prev snapshot
	var prevAt time.Time
	tick := time.NewTicker(o.Interval)
	defer tick.Stop()
	for {
		cur, err := scrape(ctx, client, o.URL)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		now := time.Now()
		if o.Clear {
			io.WriteString(stdout, clearScreen)
		}
		if !o.Once {
			fmt.Fprintf(stdout, "%s  %s\n\n", o.URL, now.UTC().Format(time.TimeOnly))
		}
		render(stdout, cur, prev, now.Sub(prevAt), o.Top)
		if o.Once {
			return nil
		}
		if !o.Clear {
			fmt.Fprintln(stdout)
		}
		prev, prevAt = cur, now
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
