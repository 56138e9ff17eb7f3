package settings

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/agentpack/agentpack/internal/apperr"
)

// Key describes one setting: its dotted name ("section.key"), type and
// default. The environment variable AGENTPACK_<NAME> (dots as
// underscores, upper case) overrides the file.
type Key struct {
	Name    string
	Type    string // string | bool | list
	Default any
}

// Keys are the settings config get/set know, in order.
var Keys = []Key{
	{"author.name", "string", ""},
	{"author.email", "string", ""},
	{"publish.default_scope", "string", ""},
	{"default_registry", "string", ""},
	{"security.require_checksum", "bool", true},
	{"install.default_tags", "list", []string{}},
	{"mcp.allow_write", "bool", false},
	{"mcp.toolsets", "list", []string{}},
}

// Value is a setting's effective value and where it came from.
type Value struct {
	Key    string `json:"key"`
	Value  any    `json:"value"`
	Source string `json:"source"` // default | global | env
}

func keyNamed(name string) (Key, error) {
	for _, k := range Keys {
		if k.Name == name {
			return k, nil
		}
	}
	var names []string
	for _, k := range Keys {
		names = append(names, k.Name)
	}
	return Key{}, apperr.New(apperr.InvalidArgument, "unknown setting %q", name).
		WithHint("valid keys: %s", strings.Join(names, ", ")).With("valid_keys", names)
}

// envName is the environment variable that overrides k.
func envName(k Key) string {
	return "AGENTPACK_" + strings.ToUpper(strings.ReplaceAll(k.Name, ".", "_"))
}

// parse turns text into k's type: true/false, a,b lists.
func parse(k Key, text string) (any, error) {
	switch k.Type {
	case "bool":
		b, err := strconv.ParseBool(strings.TrimSpace(text))
		if err != nil {
			return nil, apperr.New(apperr.InvalidArgument, "%s expects true or false, got %q", k.Name, text).With("key", k.Name)
		}
		return b, nil
	case "list":
		out := []string{}
		for _, p := range strings.Split(text, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out, nil
	}
	return text, nil
}

// fileValue is k's value in the file, if set.
func (s *Settings) fileValue(k Key) (any, bool) {
	var doc map[string]any
	if toml.Unmarshal(s.raw, &doc) != nil {
		return nil, false
	}
	var cur any = doc
	for _, part := range strings.Split(k.Name, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	if k.Type == "list" {
		if arr, ok := cur.([]any); ok {
			out := []string{}
			for _, v := range arr {
				out = append(out, fmt.Sprint(v))
			}
			return out, true
		}
	}
	return cur, true
}

// Get returns the effective value of key; E_INVALID_ARGUMENT for an
// unknown key.
func (s *Settings) Get(name string) (Value, error) {
	k, err := keyNamed(name)
	if err != nil {
		return Value{}, err
	}
	if s.env != nil {
		if text, ok := s.env(envName(k)); ok {
			if v, err := parse(k, text); err == nil {
				return Value{Key: k.Name, Value: v, Source: "env"}, nil
			}
		}
	}
	if v, ok := s.fileValue(k); ok {
		return Value{Key: k.Name, Value: v, Source: "global"}, nil
	}
	return Value{Key: k.Name, Value: k.Default, Source: "default"}, nil
}

// List returns every key's effective value, in key order.
func (s *Settings) List() []Value {
	out := make([]Value, 0, len(Keys))
	for _, k := range Keys {
		v, _ := s.Get(k.Name)
		out = append(out, v)
	}
	return out
}

// Set parses text for key's type and writes it into config.toml, changing
// only that key's line (or adding it under its table): comments and every
// other byte stay.
func (s *Settings) Set(name, text string) (Value, error) {
	k, err := keyNamed(name)
	if err != nil {
		return Value{}, err
	}
	v, err := parse(k, text)
	if err != nil {
		return Value{}, err
	}
	lit, _ := toml.Marshal(map[string]any{"v": v})
	value := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(lit)), "v ="))
	table, key := "", k.Name
	if i := strings.LastIndex(k.Name, "."); i >= 0 {
		table, key = k.Name[:i], k.Name[i+1:]
	}
	out := setLine(string(s.raw), table, key, value)
	if err := s.sys.WriteFile(s.path, []byte(out), 0o600); err != nil {
		return Value{}, err
	}
	s.raw = []byte(out)
	return Value{Key: k.Name, Value: v, Source: "global"}, nil
}

// setLine sets key = value in [table] ("" for the top level) of text.
func setLine(text, table, key, value string) string {
	lines := strings.SplitAfter(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	cur, insertAt := "", -1
	if table == "" {
		insertAt = 0
	}
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			cur = strings.Trim(t, "[] ")
			if cur == table {
				insertAt = i + 1
			} else if table == "" && insertAt == 0 {
				insertAt = i // before the first table
				break
			}
			continue
		}
		if cur == table {
			if name, _, ok := strings.Cut(t, "="); ok && strings.TrimSpace(name) == key {
				lines[i] = key + " = " + value + "\n"
				return strings.Join(lines, "")
			}
			if t != "" && !strings.HasPrefix(t, "#") {
				insertAt = i + 1
			}
		}
	}
	line := key + " = " + value + "\n"
	if insertAt < 0 {
		joined := strings.Join(lines, "")
		if joined != "" && !strings.HasSuffix(joined, "\n") {
			joined += "\n"
		}
		if joined != "" {
			joined += "\n"
		}
		return joined + "[" + table + "]\n" + line
	}
	if table == "" && insertAt == 0 && len(lines) > 0 {
		// Top-level keys go before the first table.
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), "[") {
				insertAt = i
				break
			}
			insertAt = i + 1
		}
	}
	lines = append(lines[:insertAt], append([]string{line}, lines[insertAt:]...)...)
	return strings.Join(lines, "")
}
