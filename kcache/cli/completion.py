"""Print a shell completion script for kcache, made from its own command-line parser.

The script completes command names, each command's options, and the values
of options that take a fixed set (--release, --format, ...); other values
and positional arguments complete as file names.  Load it in the shell's
start-up file:

    source <(kcache completion bash)       # ~/.bashrc
    source <(kcache completion zsh)        # ~/.zshrc

zsh runs the bash script through its bashcompinit layer.  TARGET values
(`--impl`) complete to spec, impl and go; go:RELEASE, MODULE:FACTORY and
cmd: targets are typed out.

exit status: 0 printed, 2 kcache could not run (an unknown shell).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import TextIO

from kcache import targets

#: the targets every --impl takes by a short name (bash splits words at ":", so go:v1.35
#: and its kind are typed out)
_BUILT_IN_TARGETS = (*targets.BUILTIN, "go")
#: options whose value is a target
_TARGET_OPTIONS = frozenset({"--impl"})

_BASH = """\
# kcache completion for bash, made by `kcache completion bash` from kcache's parser
_kcache() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}}
    local command="" word index
    for ((index = 1; index < COMP_CWORD; index++)); do
        word=${{COMP_WORDS[index]}}
        if [[ $word != -* ]]; then command=$word; break; fi
    done
    local options positionals
    case $command in
{commands}
        *) COMPREPLY=($(compgen -W {top} -- "$cur")); return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
    elif [[ -n $positionals ]]; then
        COMPREPLY=($(compgen -W "$positionals" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}}
complete -o default -F _kcache kcache
"""

_ZSH = """\
# kcache completion for zsh, made by `kcache completion zsh`: the bash script, run by bashcompinit
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=("bash", "zsh"), help="the shell to complete in")


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from kcache.cli.main import build_parser  # noqa: PLC0415 -- main imports this module

    out = out or sys.stdout
    script = bash_script(build_parser())
    out.write(script if args.shell == "bash" else _ZSH + script)
    return 0


def bash_script(parser: argparse.ArgumentParser) -> str:
    """The bash completion function for `parser` and its subcommands."""
    commands = _subcommands(parser)
    top = [*commands, *_options(parser)]
    command_cases = []
    for name, command in commands.items():
        options = " ".join(_options(command))
        positionals = " ".join(
            value
            for action in command._actions
            if not action.option_strings
            for value in _values(action)
        )
        command_cases.append(
            f"        {name})\n"
            f"            options={shlex.quote(options)} positionals={shlex.quote(positionals)}"
        )
        # an option with a fixed set of values completes to them, in this command
        cases = [
            f"                {option}) COMPREPLY=($(compgen -W {shlex.quote(' '.join(values))} "
            '-- "$cur")); return ;;'
            for action in command._actions
            if (values := _values(action))
            for option in action.option_strings
        ]
        if cases:
            command_cases.append(
                "            case $prev in\n" + "\n".join(cases) + "\n            esac"
            )
        command_cases.append("            ;;")
    return _BASH.format(commands="\n".join(command_cases), top=shlex.quote(" ".join(top)))


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [
        option
        for action in parser._actions
        for option in action.option_strings
        if option.startswith("--") or len(action.option_strings) == 1
    ]


def _values(action: argparse.Action) -> tuple[str, ...]:
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        return tuple(str(choice) for choice in action.choices)
    if _TARGET_OPTIONS & set(action.option_strings):
        return _BUILT_IN_TARGETS
    return ()
