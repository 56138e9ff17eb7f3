package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestPrompts(t *testing.T) {
	te := newTestEnv(t)
	cs := connect(t, te.server(t), "2025-11-25")
	res, err := cs.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Prompt{}
	for _, p := range res.Prompts {
		got[p.Name] = p
		if p.Description == "" {
			t.Errorf("%s: no description", p.Name)
		}
	}
	if len(got) != 2 || got["prompt_review"] == nil || got["command_ap-plan"] == nil {
		t.Fatalf("prompts of the default profile: %v", res.Prompts)
	}
	review := got["prompt_review"]
	if review.Description != "Review the current diff" || len(review.Arguments) != 1 || review.Arguments[0].Name != "arguments" ||
		review.Arguments[0].Required || !strings.Contains(review.Arguments[0].Description, "[focus]") {
		t.Errorf("prompt_review: %+v %+v", review, review.Arguments)
	}
	if len(got["command_ap-plan"].Arguments) != 0 {
		t.Errorf("command_ap-plan has no $ARGUMENTS and no argument-hint: %+v", got["command_ap-plan"].Arguments)
	}

	gp, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "prompt_review", Arguments: map[string]string{"arguments": "error handling"}})
	if err != nil {
		t.Fatal(err)
	}
	text := gp.Messages[0].Content.(*mcp.TextContent).Text
	if gp.Messages[0].Role != "user" || !strings.HasSuffix(strings.TrimSpace(text), "Focus: error handling") || strings.Contains(text, "---") {
		t.Errorf("rendered prompt: %q", text)
	}
	gp, err = cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "prompt_review"})
	if err != nil || strings.Contains(gp.Messages[0].Content.(*mcp.TextContent).Text, "$ARGUMENTS") {
		t.Errorf("without arguments: %v %+v", err, gp)
	}
	for _, tc := range []struct {
		name string
		args map[string]string
	}{
		{"nope", nil},
		{"command_ap-plan", map[string]string{"arguments": "x"}},
		{"prompt_review", map[string]string{"other": "x"}},
	} {
		if _, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: tc.name, Arguments: tc.args}); err == nil {
			t.Errorf("%s %v: want an error", tc.name, tc.args)
		}
	}
}

func TestPromptsFollowProfile(t *testing.T) {
	te := newTestEnv(t)
	s := te.server(t, func(o *Options) { o.Defaults.Profile = "work" })
	cs := connect(t, s, "2025-11-25")
	res, err := cs.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range res.Prompts {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "agent_reviewer,command_ap-plan,prompt_review" {
		t.Fatalf("work profile prompts: %v", names)
	}
	gp, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "agent_reviewer"})
	if err != nil || gp.Description != "A careful code reviewer" || !strings.HasPrefix(gp.Messages[0].Content.(*mcp.TextContent).Text, "You review code changes.") {
		t.Fatalf("agent prompt: %v %+v", err, gp)
	}
}

func TestPromptName(t *testing.T) {
	for in, want := range map[string]string{"prompt:review": "prompt_review", "command:ap-plan": "command_ap-plan", "agent:a.b/c": "agent_a_b_c"} {
		if got := PromptName(in); got != want {
			t.Errorf("PromptName(%q) = %q, want %q", in, got, want)
		}
	}
}
