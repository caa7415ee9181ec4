package methods_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/methods"
	"github.com/spf13/pflag"
)

// Shared is a group of hyperparameters embedded in goodConfig.
type Shared struct {
	Width int     `flag:"width" help:"a width"`
	Rate  float64 `flag:"rate" help:"a rate"`
}

type goodConfig struct {
	Count int    `flag:"count" help:"a count\nover two lines"`
	Big   int64  `flag:"big" help:"an int64"`
	Seed  uint64 `flag:"seed2" help:"a uint64"`
	Name  string `flag:"name" help:"a string"`
	On    bool   `flag:"on" help:"a bool"`
	Shared
	Steps  []int     `flag:"steps" help:"a list"`
	Ws     []float64 `flag:"ws" help:"numbers"`
	Secret int       `flag:"secret" help:"not in --help" hidden:"true"`
	Skip   int       `flag:"-"`
	state  int
}

func defaultGood() goodConfig {
	return goodConfig{Count: 3, Big: 1 << 40, Seed: 7, Name: "x", On: true, Shared: Shared{Width: 16, Rate: 0.5},
		Steps: []int{0, 2}, Ws: []float64{0.25}, Secret: 9, Skip: 4, state: 5}
}

// TestBindConfig: every tagged field becomes a flag bound to it, with the
// field's current value as default and the help text as usage (escapes
// decoded); embedded fields are flags of their own; a hidden flag parses
// but is not listed; flag:"-" and unexported fields are left out.
func TestBindConfig(t *testing.T) {
	c := defaultGood()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	methods.BindConfig(fs, &c)
	usage := fs.FlagUsages()
	for _, want := range []string{"--count int", "a count\n", "over two lines (default 3)", "--big int", "(default 1099511627776)", "--seed2 uint",
		`--name string`, `(default "x")`, "--on ", "(default true)", "--width int", "(default 16)", "--rate float", "(default 0.5)",
		"--steps ints", "(default [0,2])", "--ws float64Slice", "(default [0.250000])"} {
		if !strings.Contains(usage, want) {
			t.Errorf("usage lacks %q:\n%s", want, usage)
		}
	}
	for _, absent := range []string{"secret", "skip", "state"} {
		if strings.Contains(usage, absent) {
			t.Errorf("usage shows %q:\n%s", absent, usage)
		}
	}
	if fs.Lookup("skip") != nil || fs.Lookup("state") != nil {
		t.Error("flag:\"-\" or an unexported field became a flag")
	}
	err := fs.Parse([]string{"--count", "4", "--big", "-5", "--seed2", "8", "--name", "y", "--on=false", "--width", "32", "--rate", "0.1",
		"--steps", "1,3", "--ws", "0.5,1.5", "--secret", "10"})
	if err != nil {
		t.Fatal(err)
	}
	want := goodConfig{Count: 4, Big: -5, Seed: 8, Name: "y", On: false, Shared: Shared{Width: 32, Rate: 0.1},
		Steps: []int{1, 3}, Ws: []float64{0.5, 1.5}, Secret: 10, Skip: 4, state: 5}
	if fmt.Sprint(c) != fmt.Sprint(want) {
		t.Errorf("after parsing: %+v, want %+v", c, want)
	}
	methods.BindConfig(fs, nil) // no config, no flags
}

// TestConfigValues: a config's values by flag name — what a record states.
func TestConfigValues(t *testing.T) {
	c := defaultGood()
	b, err := json.Marshal(methods.ConfigValues(&c))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"big":1099511627776,"count":3,"name":"x","on":true,"rate":0.5,"secret":9,"seed2":7,"steps":[0,2],"width":16,"ws":[0.25]}`
	if string(b) != want {
		t.Errorf("values %s, want %s", b, want)
	}
	if got := methods.ConfigKeys(&c); strings.Join(got, ",") != "big,count,name,on,rate,secret,seed2,steps,width,ws" {
		t.Errorf("keys %v", got)
	}
	if len(methods.ConfigValues(nil)) != 0 {
		t.Error("a nil config has values")
	}
}

// TestSetConfig: key=value settings parsed by the field's type, a part
// without "=" continuing the value before it; errors name the key.
func TestSetConfig(t *testing.T) {
	c := defaultGood()
	if err := methods.SetConfig(&c, " count=5, steps=4,5,6 ,on=false,name=a=b,ws=1,2.5,width=8,"); err != nil {
		t.Fatal(err)
	}
	if c.Count != 5 || fmt.Sprint(c.Steps) != "[4 5 6]" || c.On || c.Name != "a=b" || fmt.Sprint(c.Ws) != "[1 2.5]" || c.Width != 8 {
		t.Errorf("after SetConfig: %+v", c)
	}
	if err := methods.SetConfig(&c, ""); err != nil {
		t.Errorf("empty settings: %v", err)
	}
	for _, tc := range []struct{ set, want string }{
		{"count=many", "count=many: want an integer"},
		{"seed2=-1", "seed2=-1: want a non-negative integer"},
		{"rate=fast", "rate=fast: want a number"},
		{"on=maybe", "on=maybe: want true or false"},
		{"steps=1,x", "steps=1,x: want comma-separated integers"},
		{"ws=a", "ws=a: want comma-separated numbers"},
		{"cnt=1", `unknown key "cnt" (keys: big, count, name, on, rate, secret, seed2, steps, width, ws)`},
		{"5", `"5": want key=value`},
	} {
		if err := methods.SetConfig(&c, tc.set); err == nil || err.Error() != tc.want {
			t.Errorf("SetConfig(%q) = %v, want %q", tc.set, err, tc.want)
		}
	}
}

// TestCheckFields: a failing check names the field by its Go name and its
// flag; passing checks say nothing; several failures are joined.
func TestCheckFields(t *testing.T) {
	c := defaultGood()
	if err := methods.CheckFields(&c, methods.Positive(&c.Count), methods.Width(&c.Width), methods.Prob(&c.Rate)); err != nil {
		t.Fatal(err)
	}
	c.Count, c.Width, c.Rate, c.Name = 0, 1<<20, 1, "z"
	err := methods.CheckFields(&c, methods.Positive(&c.Count), methods.Width(&c.Width), methods.Prob(&c.Rate), methods.OneOf(&c.Name, "x", "y"),
		methods.Require(&c.Steps, len(c.Steps) == 3, "must have 3 entries, got %d", len(c.Steps)))
	want := "Count (--count) must be positive, got 0\n" +
		"Width (--width) must be in [1, 65536], got 1048576\n" +
		"Rate (--rate) must be in [0, 1), got 1\n" +
		`Name (--name) must be x or y, got "z"` + "\n" +
		"Steps (--steps) must have 3 entries, got 2"
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
	if err := methods.CheckFields(&c, methods.OneOf(&c.Name, "a", "b", "c")); err == nil || !strings.Contains(err.Error(), "must be a, b or c") {
		t.Errorf("three choices: %v", err)
	}
}

type badKind struct {
	Weights map[string]float64 `flag:"weights" help:"a map"`
}
type untagged struct{ Hidden int }
type dupFlag struct {
	A int `flag:"a"`
	B int `flag:"a"`
}
type inner struct {
	X int `flag:"x"`
}
type unexportedEmbed struct{ inner }
type named32 struct {
	N int32 `flag:"n"`
}

// TestMalformedConfigsPanic: a config the machinery cannot handle is a
// programming error: binding it panics with a message naming the field,
// and so does registering a method with it (at init).
func TestMalformedConfigsPanic(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  any
		want string
	}{
		{"map field", &badKind{}, "field Weights (--weights) has type map[string]float64"},
		{"int32 field", &named32{}, "field N (--n) has type int32"},
		{"untagged field", &untagged{}, "field Hidden has no flag tag"},
		{"flag twice", &dupFlag{}, "fields A and B both use the flag --a"},
		{"unexported embedded struct", &unexportedEmbed{}, "embedded struct methods_test.inner is unexported"},
		{"not a pointer", goodConfig{}, "a config must be a non-nil pointer to a struct, got methods_test.goodConfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for what, f := range map[string]func(){
				"BindConfig": func() { methods.BindConfig(pflag.NewFlagSet("t", pflag.ContinueOnError), tc.cfg) },
				"Register":   func() { methods.Register(func() methods.Method { return configMethod{tc.cfg} }) },
			} {
				msg := panicOf(f)
				if !strings.Contains(msg, tc.want) {
					t.Errorf("%s: panic %q, want one containing %q", what, msg, tc.want)
				}
			}
		})
	}
	c := defaultGood()
	other := 1
	if msg := panicOf(func() { _ = methods.CheckFields(&c, methods.Positive(&other)) }); !strings.Contains(msg, "not a pointer to a field of the config") {
		t.Errorf("a check outside the config: panic %q", msg)
	}
}

func panicOf(f func()) (msg string) {
	defer func() { msg = fmt.Sprint(recover()) }()
	f()
	return ""
}

// configMethod is a method with a given configuration (never registered:
// Register refuses its malformed configs).
type configMethod struct{ cfg any }

func (configMethod) Name() string                                   { return "configtest" }
func (configMethod) Short() string                                  { return "" }
func (configMethod) Levels() []methods.Level                        { return []methods.Level{methods.None} }
func (configMethod) DefaultSplit(string) string                     { return "" }
func (m configMethod) Config() any                                  { return m.cfg }
func (configMethod) Validate() error                                { return nil }
func (configMethod) Epochs() int                                    { return 1 }
func (configMethod) Run(*methods.Context) (*methods.Outcome, error) { return nil, nil }

// TestRegisteredConfigs: every registered method's defaults are valid, its
// flags and its record's keys are the same, and each flag's default (what
// --help shows) is the value the record states.
func TestRegisteredConfigs(t *testing.T) {
	for _, name := range methods.Names() {
		m, _ := methods.New(name)
		if err := m.Validate(); err != nil {
			t.Errorf("%s: defaults invalid: %v", name, err)
		}
		fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
		methods.BindConfig(fs, m.Config())
		values := methods.ConfigValues(m.Config())
		n := 0
		fs.VisitAll(func(f *pflag.Flag) {
			n++
			v, ok := values[f.Name]
			if !ok {
				t.Errorf("%s: flag --%s is not in the record's hyperparameters", name, f.Name)
			} else if got := fmt.Sprint(v); got != f.DefValue {
				t.Errorf("%s --%s: default %q, record value %q", name, f.Name, f.DefValue, got)
			}
		})
		if n != len(values) {
			t.Errorf("%s: %d flags, %d hyperparameters", name, n, len(values))
		}
	}
}
