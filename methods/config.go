package methods

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/pflag"
)

// configField is one flag of a config: its Go field name, its tags and the
// addressable field.
type configField struct {
	name, flag, help string
	hidden           bool
	value            reflect.Value
}

// configTypes are the field types a config may use, with what a value of
// each must look like (for SetConfig's errors).
var configTypes = map[reflect.Type]string{
	reflect.TypeFor[int]():       "an integer",
	reflect.TypeFor[int64]():     "an integer",
	reflect.TypeFor[uint64]():    "a non-negative integer",
	reflect.TypeFor[float64]():   "a number",
	reflect.TypeFor[string]():    "a string",
	reflect.TypeFor[bool]():      "true or false",
	reflect.TypeFor[[]int]():     "comma-separated integers",
	reflect.TypeFor[[]float64](): "comma-separated numbers",
}

// configFields lists the flags of the config cfg points to, the fields of
// embedded structs in place; nil lists none. It panics on a malformed
// config (see above).
func configFields(cfg any) []configField {
	if cfg == nil {
		return nil
	}
	v := reflect.ValueOf(cfg)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("methods: a config must be a non-nil pointer to a struct, got %T", cfg))
	}
	var out []configField
	walkConfig(v.Elem(), v.Elem().Type().String(), &out, map[string]string{})
	return out
}

func walkConfig(v reflect.Value, config string, out *[]configField, seen map[string]string) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		flag, tagged := sf.Tag.Lookup("flag")
		if flag == "-" {
			continue
		}
		if sf.Anonymous && !tagged && sf.Type.Kind() == reflect.Struct {
			if !sf.IsExported() {
				panic(fmt.Sprintf("methods: config %s: embedded struct %s is unexported; export it so that its fields can be set", config, sf.Type))
			}
			walkConfig(v.Field(i), config, out, seen)
			continue
		}
		switch {
		case !sf.IsExported() && tagged:
			panic(fmt.Sprintf("methods: config %s: field %s has a flag tag but is unexported", config, sf.Name))
		case !sf.IsExported():
			continue
		case !tagged || flag == "":
			panic(fmt.Sprintf("methods: config %s: field %s has no flag tag (tag it `flag:\"name\"`, or `flag:\"-\"` to leave it out)", config, sf.Name))
		}
		if _, ok := configTypes[sf.Type]; !ok {
			panic(fmt.Sprintf("methods: config %s: field %s (--%s) has type %s; a config field must be int, int64, uint64, float64, string, bool, []int, []float64 or an embedded struct",
				config, sf.Name, flag, sf.Type))
		}
		if prev, dup := seen[flag]; dup {
			panic(fmt.Sprintf("methods: config %s: fields %s and %s both use the flag --%s", config, prev, sf.Name, flag))
		}
		seen[flag] = sf.Name
		*out = append(*out, configField{name: sf.Name, flag: flag, help: sf.Tag.Get("help"), hidden: sf.Tag.Get("hidden") == "true", value: v.Field(i)})
	}
}

// BindConfig registers every field of the config cfg points to as a flag
// of fs, bound to the field, with the field's current value as its
// default (so a config filled by its DefaultConfig shows those defaults in
// --help). cfg may be nil (no flags). It panics on a malformed config.
func BindConfig(fs *pflag.FlagSet, cfg any) {
	for _, f := range configFields(cfg) {
		switch p := f.value.Addr().Interface().(type) {
		case *int:
			fs.IntVar(p, f.flag, *p, f.help)
		case *int64:
			fs.Int64Var(p, f.flag, *p, f.help)
		case *uint64:
			fs.Uint64Var(p, f.flag, *p, f.help)
		case *float64:
			fs.Float64Var(p, f.flag, *p, f.help)
		case *string:
			fs.StringVar(p, f.flag, *p, f.help)
		case *bool:
			fs.BoolVar(p, f.flag, *p, f.help)
		case *[]int:
			fs.IntSliceVar(p, f.flag, *p, f.help)
		case *[]float64:
			fs.Float64SliceVar(p, f.flag, *p, f.help)
		}
		if f.hidden {
			_ = fs.MarkHidden(f.flag)
		}
	}
}

// ConfigValues returns the config cfg points to as a map from flag name to
// value (numbers, strings, booleans, lists): what a record states as the
// method's hyperparameters. cfg may be nil (an empty map).
func ConfigValues(cfg any) map[string]any {
	out := map[string]any{}
	for _, f := range configFields(cfg) {
		switch x := f.value.Interface().(type) {
		case []int:
			out[f.flag] = slices.Clone(x)
		case []float64:
			out[f.flag] = slices.Clone(x)
		default:
			out[f.flag] = x
		}
	}
	return out
}

// ConfigKeys lists the flag names of the config cfg points to, sorted.
func ConfigKeys(cfg any) []string {
	var keys []string
	for _, f := range configFields(cfg) {
		keys = append(keys, f.flag)
	}
	sort.Strings(keys)
	return keys
}

// SetConfig sets fields of the config cfg points to from assignments
// "key=value,key=value", the keys being flag names and each value parsed
// as the flag parses it (by the field's type). A value may hold commas (a
// list, a comma-separated spec): a part without "=" continues the value
// before it, so "steps=0,2,lambda=1" sets steps to "0,2". Empty
// assignments set nothing. An unknown key or a value of the wrong type is
// an error naming the key; fields before it are already set.
func SetConfig(cfg any, assignments string) error {
	var keys, values []string
	for _, part := range strings.Split(assignments, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			if len(keys) == 0 {
				return fmt.Errorf("%q: want key=value", strings.TrimSpace(part))
			}
			values[len(values)-1] += "," + strings.TrimSpace(part)
			continue
		}
		keys, values = append(keys, strings.TrimSpace(k)), append(values, strings.TrimSpace(v))
	}
	for i, key := range keys {
		if err := setField(cfg, key, values[i]); err != nil {
			return err
		}
	}
	return nil
}

// setField sets the field whose flag is key, parsing value with the
// flag's own parser.
func setField(cfg any, key, value string) error {
	for _, f := range configFields(cfg) {
		if f.flag != key {
			continue
		}
		fs := pflag.NewFlagSet("config", pflag.ContinueOnError)
		BindConfig(fs, cfg)
		if err := fs.Lookup(key).Value.Set(value); err != nil {
			return fmt.Errorf("%s=%s: want %s", key, value, configTypes[f.value.Type()])
		}
		return nil
	}
	return fmt.Errorf("unknown key %q (keys: %s)", key, strings.Join(ConfigKeys(cfg), ", "))
}

// ParseConfigFlags sets cfg from command-line flags as `dpgnn train METHOD`
// takes them (e.g. "--hops", "1"); an argument that is not a flag is an
// error.
func ParseConfigFlags(cfg any, args []string) error {
	fs := pflag.NewFlagSet("config", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	BindConfig(fs, cfg)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if rest := fs.Args(); len(rest) > 0 {
		return fmt.Errorf("%q is not a flag", rest[0])
	}
	return nil
}
