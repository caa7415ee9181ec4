package cli

import (
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/methods"
)

// regToy is a method of the registration tests: a name and a config, and
// the smallest Run (the most frequent training label, no privacy level).
type regToy struct {
	name string
	cfg  any
}

func (m *regToy) Name() string                                 { return m.name }
func (*regToy) Short() string                                  { return "a registration test method" }
func (*regToy) Levels() []methods.Level                        { return []methods.Level{methods.None} }
func (*regToy) DefaultSplit(string) string                     { return "ratio:0.5:0.2" }
func (m *regToy) Config() any                                  { return m.cfg }
func (*regToy) Validate() error                                { return nil }
func (*regToy) Epochs() int                                    { return 1 }
func (*regToy) Run(*methods.Context) (*methods.Outcome, error) { return &methods.Outcome{}, nil }

func toy(name string, cfg any) func() methods.Method {
	return func() methods.Method { return &regToy{name: name, cfg: cfg} }
}

// TestRegisterRefusals: Register refuses, with an error naming the method
// and registering none of the batch, a nil factory, a factory returning
// nil, an empty name, a built-in's name, a name given twice and a config
// struct BindConfig cannot bind; a flag that clashes with a command's own
// is an error too.
func TestRegisterRefusals(t *testing.T) {
	type badType struct {
		M map[string]int `flag:"m"`
	}
	type noTag struct{ Width int }
	type clash struct {
		Seed int `flag:"seed" help:"a flag train already has"`
	}
	for _, tc := range []struct {
		name string
		ms   []func() methods.Method
		want string
		free []string // names the refusal must leave unregistered
	}{
		{"nil factory", []func() methods.Method{toy("regfree1", nil), nil}, "method 2 of cli.Main is a nil factory", []string{"regfree1"}},
		{"nil method", []func() methods.Method{func() methods.Method { return nil }}, "its factory returned nil", nil},
		{"empty name", []func() methods.Method{toy("", nil)}, "has an empty name", nil},
		{"built-in name", []func() methods.Method{toy("gcn", nil)}, `method "gcn" (*cli.regToy) is registered twice: the name is taken`, nil},
		{"twice", []func() methods.Method{toy("regdup", nil), toy("regdup", nil)}, `method "regdup" (*cli.regToy) is registered twice`, []string{"regdup"}},
		{"config type", []func() methods.Method{toy("regbad1", &badType{})}, `method "regbad1" (*cli.regToy): its configuration struct cannot be bound to flags: methods: config cli.badType: field M (--m) has type map[string]int`, []string{"regbad1"}},
		{"config tag", []func() methods.Method{toy("regbad2", &noTag{})}, "field Width has no flag tag", []string{"regbad2"}},
		{"flag clash", []func() methods.Method{toy("regclash", &clash{})}, `method "regclash" (*cli.regToy): its flag --seed is one of dpgnn `, []string{"regclash"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Register(tc.ms...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Register: %v, want an error containing %q", err, tc.want)
			}
			for _, n := range tc.free {
				if _, err := methods.New(n); err == nil {
					t.Errorf("%s was registered by a refused batch", n)
				}
			}
		})
	}
}

// TestRegisterAddsCommands: a method registered by Register is a
// subcommand of train, inspect and tune, and trains.
func TestRegisterAddsCommands(t *testing.T) {
	type cfg struct {
		Width int `flag:"regwidth" help:"a width"`
	}
	if err := Register(toy("regok", &cfg{Width: 3})); err != nil {
		t.Fatal(err)
	}
	help, err := runCLI(t, "train", "regok", "--help")
	if err != nil || !strings.Contains(help, "--regwidth int") || !strings.Contains(help, "a width (default 3)") {
		t.Errorf("train regok --help (%v):\n%s", err, help)
	}
	if err := Register(toy("regok", nil)); err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Errorf("registering regok again: %v, want refused", err)
	}
}
