package mlp

import (
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/methods"
)

// TestInputDropoutFlag: by default the input features get --dropout without
// DP-SGD and no dropout with it; an explicit --input-dropout applies to both;
// a probability outside [0, 1) is refused.
func TestInputDropoutFlag(t *testing.T) {
	cases := []struct {
		args          []string
		plain, dpsgd  float64
		invalidSubstr string
	}{
		{args: nil, plain: 0.5, dpsgd: 0},
		{args: []string{"--dropout", "0.3"}, plain: 0.3, dpsgd: 0},
		{args: []string{"--input-dropout", "0.2"}, plain: 0.2, dpsgd: 0.2},
		{args: []string{"--input-dropout", "0"}, plain: 0, dpsgd: 0},
		{args: []string{"--input-dropout", "1"}, invalidSubstr: "InDropout (--input-dropout) must be in [0, 1)"},
		{args: []string{"--input-dropout", "-0.5"}, invalidSubstr: "InDropout (--input-dropout) must be in [0, 1)"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			m := New(DefaultConfig())
			if err := methods.ParseConfigFlags(m.Config(), tc.args); err != nil {
				t.Fatal(err)
			}
			err := m.Validate()
			if tc.invalidSubstr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.invalidSubstr) {
					t.Fatalf("Validate() = %v, want an error naming %s", err, tc.invalidSubstr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				dpsgd bool
				want  float64
			}{{false, tc.plain}, {true, tc.dpsgd}} {
				cfg, err := m.config(10, 3, c.dpsgd)
				if err != nil {
					t.Fatal(err)
				}
				if cfg.InputDropout != c.want || cfg.Dropout != m.cfg.Dropout {
					t.Errorf("dpsgd=%v: input dropout %g, hidden %g; want %g, %g", c.dpsgd, cfg.InputDropout, cfg.Dropout, c.want, m.cfg.Dropout)
				}
			}
		})
	}
}
