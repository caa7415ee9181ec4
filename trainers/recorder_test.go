package trainers

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestLinesProgress(t *testing.T) {
	var buf bytes.Buffer
	l := NewLines(&buf, 10*time.Second)
	now := time.Unix(0, 0)
	l.now = func() time.Time { return now }
	l.Plan(100)
	for i := 0; i < 30; i++ {
		now = now.Add(time.Second)
		l.Epoch(EpochStats{})
	}
	out := buf.String()
	if strings.Count(out, "\n") != 3 || !strings.Contains(out, "progress: 10/100 epochs (10%), 10s elapsed, about 1m30s left") {
		t.Fatalf("progress lines:\n%s", out)
	}
}
