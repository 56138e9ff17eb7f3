package engine

import (
	"context"
	"os"

	"github.com/agentpack/agentpack/engine/settings"
)

// ConfigValue is the data of `config get <key>` and `config set`.
type ConfigValue = settings.Value

// ConfigMerged is the data of `config get` without a key.
type ConfigMerged struct {
	Key    *string        `json:"key"`
	Value  map[string]any `json:"value"`
	Source string         `json:"source"`
}

// ConfigListData is the data of `config list`.
type ConfigListData struct {
	Settings []settings.Value `json:"settings"`
}

func (e *Engine) settings() (*settings.Settings, error) {
	return settings.Load(e.Sys, abs(e.Env.AgentpackHome), os.LookupEnv)
}

// ConfigGet returns one setting, or with key "" every setting merged.
func (e *Engine) ConfigGet(ctx context.Context, key string) (any, error) {
	s, err := e.settings()
	if err != nil {
		return nil, err
	}
	if key != "" {
		return s.Get(key)
	}
	out := &ConfigMerged{Value: map[string]any{}, Source: "merged"}
	for _, v := range s.List() {
		out.Value[v.Key] = v.Value
	}
	return out, nil
}

// ConfigList returns every setting with its source.
func (e *Engine) ConfigList(ctx context.Context) (*ConfigListData, error) {
	s, err := e.settings()
	if err != nil {
		return nil, err
	}
	return &ConfigListData{Settings: s.List()}, nil
}

// ConfigSet writes one setting into config.toml, under the state lock.
func (e *Engine) ConfigSet(ctx context.Context, key, value string) (*settings.Value, error) {
	var out settings.Value
	err := e.withCheckedLock(ctx, "config set", func([]string) error {
		s, err := e.settings()
		if err != nil {
			return err
		}
		out, err = s.Set(key, value)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}
