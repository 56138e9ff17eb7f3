package main

// completionShells are the shells `agentpack completion` writes a script for.
var completionShells = map[string]string{
	"bash":       bashCompletion,
	"zsh":        zshCompletion,
	"fish":       fishCompletion,
	"powershell": powershellCompletion,
}

// completionScript returns the completion script for shell. Every script
// only hands the words typed so far to `agentpack __complete` and offers
// what it prints, so the script never drifts from the commands, and a
// script saved to a file stays right after an upgrade.
func completionScript(shell string) (string, error) {
	script, ok := completionShells[shell]
	if !ok {
		return "", errUnknownShell
	}
	return script, nil
}

// completionInstall is the detailed help of `agentpack completion`
// (go/doc text: indented lines are shown as they are).
const completionInstall = `Completes commands, flags, module ids (remove), snapshot ids (rollback --to, snapshots show), profiles (--profile), targets (--target, add --targets) and source names (source update|remove|diff|scan), reading the repo named by an earlier --repo. The script asks agentpack itself, so agentpack must be on PATH.

bash (add to ~/.bashrc; with bash 3.2, as on macOS, use eval "$(agentpack completion bash)"):

    source <(agentpack completion bash)

zsh (put the script on $fpath before compinit runs in ~/.zshrc):

    mkdir -p ~/.zfunc && agentpack completion zsh > ~/.zfunc/_agentpack
    # in ~/.zshrc, before compinit:  fpath=(~/.zfunc $fpath)

or, after compinit in ~/.zshrc: source <(agentpack completion zsh)

fish:

    agentpack completion fish > ~/.config/fish/completions/agentpack.fish

PowerShell (add to the file $PROFILE names):

    agentpack completion powershell | Out-String | Invoke-Expression

Start a new shell to use it.`

const bashCompletion = `# bash completion for agentpack (agentpack completion bash). It asks
# ` + "`agentpack __complete <words>`" + ` for the candidates of the word being typed.
_agentpack() {
    local line=${COMP_LINE:0:COMP_POINT} cur pre="" c out brk
    local -a words
    read -r -a words <<< "$line"
    if [[ $line =~ [[:space:]]$ || ${#words[@]} -lt 2 ]]; then
        words+=("")
    fi
    cur=${words[${#words[@]}-1]}
    COMPREPLY=()
    out=$(agentpack __complete "${words[@]:1}" 2>/dev/null) || return 0
    if [[ $out == :file ]]; then
        compopt -o default 2>/dev/null ||
            while IFS= read -r c; do COMPREPLY+=("$c"); done < <(compgen -f -- "${cur#--*=}")
        return 0
    fi
    # Readline replaces only the part of the word after its last = or :
    # (module ids have a colon), so that much of each candidate is dropped.
    brk=${COMP_WORDBREAKS//[^=:]/}
    if [[ -n $brk ]]; then
        pre=${cur%"${cur##*[$brk]}"}
    fi
    while IFS= read -r c; do
        [[ -n $c ]] && COMPREPLY+=("${c#"$pre"}")
    done <<< "$out"
    return 0
}
complete -F _agentpack agentpack
`

const zshCompletion = `#compdef agentpack
# zsh completion for agentpack (agentpack completion zsh). It asks
# ` + "`agentpack __complete <words>`" + ` for the candidates of the word being typed.
_agentpack() {
    local cur=${(Q)words[CURRENT]}
    local -a before out
    before=("${(@Q)words[2,CURRENT-1]}")
    out=("${(@f)$(agentpack __complete "${before[@]}" "$cur" 2>/dev/null)}")
    if [[ ${out[1]} == :file ]]; then
        [[ $cur == --*=* ]] && compset -P '*='
        _files
        return
    fi
    out=(${out:#})
    (( ${#out} )) && compadd -- "${out[@]}"
}

if [[ $funcstack[1] == _agentpack ]]; then
    _agentpack "$@"
else
    compdef _agentpack agentpack
fi
`

const fishCompletion = `# fish completion for agentpack (agentpack completion fish). It asks
# ` + "`agentpack __complete <words>`" + ` for the candidates of the word being typed.
function __agentpack_complete
    set -l words (commandline -opc)
    set -e words[1]
    set -l cur (commandline -ct)
    set -l out (agentpack __complete $words "$cur" 2>/dev/null)
    if test "$out" = ":file"
        set -l pre (string match -r -- '^--[^=]*=' "$cur")
        for p in (__fish_complete_path (string replace -r -- '^--[^=]*=' '' "$cur"))
            echo "$pre$p"
        end
        return
    end
    printf '%s\n' $out
end
complete -c agentpack -f -a '(__agentpack_complete)'
`

const powershellCompletion = `# PowerShell completion for agentpack (agentpack completion powershell). It
# asks ` + "`agentpack __complete <words>`" + ` for the candidates of the word being typed.
Register-ArgumentCompleter -Native -CommandName agentpack -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)
    $words = @()
    foreach ($e in @($commandAst.CommandElements | Select-Object -Skip 1)) {
        if ($e.Extent.EndOffset -ge $cursorPosition) { break }
        if ($e -is [System.Management.Automation.Language.StringConstantExpressionAst]) { $words += $e.Value }
        else { $words += $e.Extent.Text }
    }
    $cur = $wordToComplete
    # Before 7.3 PowerShell drops an empty argument; agentpack reads '""' as one.
    if ($cur -eq '' -and ($PSVersionTable.PSVersion -lt [version]'7.3' -or $PSNativeCommandArgumentPassing -eq 'Legacy')) {
        $cur = '""'
    }
    $out = @(& agentpack __complete @words $cur 2>$null)
    if ($out.Count -eq 1 -and $out[0] -eq ':file') { return } # PowerShell then completes paths
    foreach ($c in $out) {
        if ($c -ne '') {
            [System.Management.Automation.CompletionResult]::new($c, $c, 'ParameterValue', $c)
        }
    }
}
`
