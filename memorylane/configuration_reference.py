"""The configuration reference, generated from the settings (docs/configuration.md on the docs site).

Reads ``memorylane/settings.py`` as source, never imports it (importing it starts the embedded
database): every key of ``MEMORY_LANE`` with its default — evaluated as if no environment variable
were set — and the environment variable that sets it; and every environment variable the server's
code reads (``memorylane/``, ``memory/``, ``api/``, ``dashboard/``). The words come from
``memorylane/settings_descriptions.py``; ``tests/memorylane/test_configuration_reference.py`` fails
for a key or variable without them, so a new setting cannot ship undocumented.

``python -m memorylane.configuration_reference`` prints the page's generated part.
"""

from __future__ import annotations

import ast
import inspect
import json
import textwrap
import types
from dataclasses import dataclass, field
from pathlib import Path

from memorylane import settings_descriptions

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = ROOT / "memorylane" / "settings.py"
DESCRIPTIONS = ROOT / "memorylane" / "settings_descriptions.py"
# The server's code: the environment variables these read are configuration. clients/ (the
# agent-side CLI, its own configuration), bench/ and tests/ are not the server.
SERVER_PACKAGES = ("memorylane", "memory", "api", "dashboard")
# Read by our code, but not configuration: Django's own bootstrap.
NOT_CONFIGURATION = {"DJANGO_SETTINGS_MODULE"}
# A default longer than this (as JSON) is summarised in its table and printed whole below it.
LONG_DEFAULT_CHARS = 60


@dataclass
class Setting:
    """One key of ``MEMORY_LANE``."""

    key: str
    default: object
    source: str  # the expression in settings.py, shown when it cannot be evaluated
    evaluated: bool
    environment: list[str] = field(default_factory=list)


@dataclass
class Variable:
    """One environment variable the server reads."""

    name: str
    default: object = None  # None: unset (no default in the code)
    files: list[str] = field(default_factory=list)


class _EmptyEnviron(dict):
    """``os.environ`` with no variable set, that keeps none either (``setdefault`` only answers)."""

    def __setitem__(self, name: str, value: str) -> None:
        pass

    def setdefault(self, name: str, default: str | None = None) -> str | None:
        return default


class _NoEnvironment:
    """Stands in for ``os`` while defaults are evaluated: no variable is set."""

    environ = _EmptyEnviron()

    @staticmethod
    def getenv(name: str, default: str | None = None) -> str | None:
        return default


def _helpers(tree: ast.Module) -> dict:
    """The settings' ``env*`` helpers (``envbool``, ``envint``, any added later), compiled against an
    empty environment, so that ``envint("X", "4")`` evaluates to its default, 4."""
    from django.core.exceptions import ImproperlyConfigured

    namespace: dict = {"os": _NoEnvironment, "ImproperlyConfigured": ImproperlyConfigured}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("env"):
            # Annotations stay strings, as under the settings' own `from __future__ import annotations`.
            module = ast.Module(
                body=[*ast.parse("from __future__ import annotations").body, node], type_ignores=[]
            )
            try:
                exec(compile(module, str(SETTINGS), "exec"), namespace)  # noqa: S102
            except Exception:  # a helper that needs more of settings.py: its calls show their source
                continue
    return namespace


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


_ENVIRON_CALLS = {"os.environ.get", "os.getenv", "os.environ.setdefault", "environ.get", "getenv"}


def _environment_reads(node: ast.AST, helpers: dict) -> list[tuple[str, ast.AST | None, ast.Call | None]]:
    """Every environment variable ``node`` reads by a constant name: (name, its default's expression
    or None, the call) — through ``os.environ.get`` / ``getenv`` / ``setdefault``, ``os.environ[…]``
    or a settings helper such as ``envint``."""
    found = []
    for child in ast.walk(node):
        if isinstance(child, ast.Call) and child.args:
            name_node = child.args[0]
            if not (isinstance(name_node, ast.Constant) and isinstance(name_node.value, str)):
                continue
            function = _dotted(child.func)
            if function in _ENVIRON_CALLS:
                found.append((child, name_node.value, child.args[1] if len(child.args) > 1 else None, None))
            elif function.startswith("env") and isinstance(helpers.get(function), types.FunctionType):
                found.append((child, name_node.value, None, child))
        elif (
            isinstance(child, ast.Subscript)
            and isinstance(child.ctx, ast.Load)
            and _dotted(child.value) in {"os.environ", "environ"}
            and isinstance(child.slice, ast.Constant)
            and isinstance(child.slice.value, str)
        ):
            found.append((child, child.slice.value, None, None))
    found.sort(key=lambda read: (read[0].lineno, read[0].col_offset))  # in source order
    return [read[1:] for read in found if read[1].isupper()]


def _evaluate(node: ast.AST, helpers: dict) -> tuple[object, bool]:
    try:
        return eval(compile(ast.Expression(node), str(SETTINGS), "eval"), dict(helpers)), True  # noqa: S307
    except Exception:  # a name defined elsewhere in settings.py: the source stands in
        return None, False


def _helper_default(call: ast.Call, helpers: dict) -> object:
    """The default a helper call (``envint("X", "4")``, ``envbool("X")``) falls back on."""
    function = helpers[_dotted(call.func)]
    try:
        args = [_evaluate(arg, helpers)[0] for arg in call.args]
        kwargs = {kw.arg: _evaluate(kw.value, helpers)[0] for kw in call.keywords if kw.arg}
        bound = inspect.signature(function).bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    return bound.arguments.get("default")


def _settings_tree() -> ast.Module:
    return ast.parse(SETTINGS.read_text(), str(SETTINGS))


def memory_lane_settings() -> list[Setting]:
    """Every key of ``MEMORY_LANE`` in settings.py's order: the dict literal, then any
    ``MEMORY_LANE["KEY"] = …`` assigned after it."""
    source = SETTINGS.read_text()
    tree = ast.parse(source, str(SETTINGS))
    helpers = _helpers(tree)
    pairs: list[tuple[str, ast.AST]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if _dotted(target) == "MEMORY_LANE" and isinstance(node.value, ast.Dict):
                    pairs += [
                        (key.value, value)
                        for key, value in zip(node.value.keys, node.value.values, strict=True)
                        if isinstance(key, ast.Constant) and isinstance(key.value, str)
                    ]
                elif (
                    isinstance(target, ast.Subscript)
                    and _dotted(target.value) == "MEMORY_LANE"
                    and isinstance(target.slice, ast.Constant)
                ):
                    pairs.append((target.slice.value, node.value))
    settings = {}
    for key, value in pairs:
        default, evaluated = _evaluate(value, helpers)
        environment = [name for name, _, _ in _environment_reads(value, helpers)]
        shown = "" if evaluated else ast.get_source_segment(source, value) or ""
        settings[key] = Setting(key, default, shown, evaluated, environment)
    return list(settings.values())


def _server_files() -> list[Path]:
    files = [SETTINGS]
    for package in SERVER_PACKAGES:
        files += sorted(
            path
            for path in (ROOT / package).rglob("*.py")
            if path != SETTINGS and "migrations" not in path.parts and path != Path(__file__)
        )
    return files


def environment_variables() -> list[Variable]:
    """Every environment variable the server's code reads by name, in the order first met
    (settings.py first), with the default the code falls back on."""
    helpers = _helpers(_settings_tree())
    variables: dict[str, Variable] = {}
    helper_names = [name for name, value in helpers.items() if isinstance(value, types.FunctionType)]
    for path in _server_files():
        text = path.read_text()
        if "environ" not in text and "getenv" not in text and not any(name in text for name in helper_names):
            continue  # most files: parsing them all took seconds
        try:
            tree = ast.parse(text, str(path))
        except SyntaxError:  # another hand's file mid-edit: the next build reads it
            continue
        for name, default_node, helper_call in _environment_reads(tree, helpers):
            if name in NOT_CONFIGURATION:
                continue
            variable = variables.setdefault(name, Variable(name))
            relative = "memorylane/settings.py" if path == SETTINGS else path.relative_to(ROOT).as_posix()
            if relative not in variable.files:
                variable.files.append(relative)
            if variable.default is None:
                if helper_call is not None:
                    variable.default = _helper_default(helper_call, helpers)
                elif default_node is not None:
                    variable.default = _evaluate(default_node, helpers)[0]
    return list(variables.values())


# --- what the descriptions lack (the test's and the build's check) ---------------------------------


def undescribed_settings() -> list[str]:
    described = settings_descriptions.described_keys()
    return [setting.key for setting in memory_lane_settings() if setting.key not in described]


def stale_descriptions() -> list[str]:
    keys = {setting.key for setting in memory_lane_settings()}
    return sorted(key for key in settings_descriptions.described_keys() if key not in keys)


def undescribed_variables() -> list[str]:
    return [v.name for v in environment_variables() if v.name not in settings_descriptions.ENVIRONMENT]


def stale_variables() -> list[str]:
    read = {variable.name for variable in environment_variables()} | set(settings_descriptions.READ_BY_TOOLS)
    return sorted(name for name in settings_descriptions.ENVIRONMENT if name not in read)


def duplicated_descriptions() -> list[str]:
    seen: set[str] = set()
    twice = []
    for section in settings_descriptions.MEMORY_LANE.values():
        twice += [key for key in section if key in seen]
        seen |= set(section)
    return sorted(set(twice))


def problems() -> list[str]:
    """Each missing or stale description, with where to fix it."""
    where = DESCRIPTIONS.relative_to(ROOT).as_posix()
    found = [
        f"MEMORY_LANE[{key!r}] has no description: add {key!r}: '…' to a section of MEMORY_LANE in {where}"
        for key in undescribed_settings()
    ]
    found += [
        f"{name} (an environment variable the server reads) has no description: add {name!r}: '…' "
        f"to ENVIRONMENT in {where}"
        for name in undescribed_variables()
    ]
    found += [
        f"{where} describes {key!r}, which MEMORY_LANE no longer has: remove it"
        for key in stale_descriptions()
    ]
    found += [
        f"{where} describes {name}, which the server no longer reads: remove it from ENVIRONMENT "
        "(or name the tool that reads it in READ_BY_TOOLS)"
        for name in stale_variables()
    ]
    found += [f"{where} describes {key!r} in two sections: keep one" for key in duplicated_descriptions()]
    return found


# --- the markdown -----------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _json(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except TypeError:
        return repr(value)


def _summary(value: object) -> str:
    if isinstance(value, list | tuple):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return f"{len(value)} entries"
    if isinstance(value, str):
        return f"{len(value.split())} words" if " " in value else f"{len(value)} characters"
    return type(value).__name__


def _packed(items: list[str], width: int) -> list[str]:
    """``items`` joined by ", " into lines of at most ``width`` characters (an item never split)."""
    lines = [""]
    for item in items:
        if lines[-1] and len(lines[-1]) + len(item) + 2 > width:
            lines.append("")
        lines[-1] = f"{lines[-1]}, {item}" if lines[-1] else item
    return lines


def _block(value: object) -> list[str]:
    """A long default as a fenced block: one entry (or group) a line, scalars packed; a string wrapped."""
    if isinstance(value, str):
        return ["```text", *textwrap.wrap(value, 100), "```"]
    if isinstance(value, dict):
        lines, brackets = [f"{_json(key)}: {_json(item)}" for key, item in value.items()], "{}"
    elif isinstance(value, list | tuple) and any(isinstance(item, list | tuple | dict) for item in value):
        lines, brackets = [_json(item) for item in value], "[]"
    elif isinstance(value, list | tuple):
        lines, brackets = _packed([_json(item) for item in value], 96), "[]"
    else:
        return ["```json", _json(value), "```"]
    body = [f"  {line}," for line in lines[:-1]] + [f"  {line}" for line in lines[-1:]]
    return ["```json", brackets[0], *body, brackets[1], "```"]


def _anchor(key: str) -> str:
    return key.lower()


def _default_cell(setting: Setting, long_values: list[Setting]) -> str:
    if not setting.evaluated:
        return f"`{_cell(setting.source)}`"
    text = _json(setting.default)
    if len(text) <= LONG_DEFAULT_CHARS:
        return f"`{_cell(text)}`"
    long_values.append(setting)
    return f"{_summary(setting.default)} ([in full](#{_anchor(setting.key)}))"


def _variable_default(variable: Variable) -> str:
    if variable.default is None:
        return "unset"
    if variable.default == "":
        return "empty"
    return f"`{_cell(str(variable.default))}`"


def render() -> str:
    """The generated part of docs/configuration.md: the environment variables, then ``MEMORY_LANE``
    section by section (keys without a description last, under "Not described yet")."""
    lines = ["## Environment variables", ""]
    lines += [
        "Every variable the server's code reads (`python -m memorylane.configuration_reference` lists",
        "them from the source). The default is the code's, with no variable set.",
        "",
        "| variable | default | read in | what it does |",
        "| --- | --- | --- | --- |",
    ]
    variables = environment_variables()
    read = {variable.name for variable in variables}
    for variable in variables:
        description = settings_descriptions.ENVIRONMENT.get(variable.name, "*not described yet*")
        files = ", ".join(f"`{name}`" for name in variable.files)
        lines.append(
            f"| `{variable.name}` | {_variable_default(variable)} | {files} | {_cell(description)} |"
        )
    for name, tool in settings_descriptions.READ_BY_TOOLS.items():
        if name not in read:
            description = settings_descriptions.ENVIRONMENT.get(name, "*not described yet*")
            lines.append(f"| `{name}` | — | {tool} | {_cell(description)} |")

    settings = {setting.key: setting for setting in memory_lane_settings()}
    lines += [
        "",
        "## `MEMORY_LANE`",
        "",
        "Every key, in sections. A JSON file named by `MEMORYLANE_CONFIG` sets any of them",
        '(`{"RRF_K": 40}`; an unknown key is refused at start); a key with an environment variable',
        "takes it too, and the file wins over the variable.",
    ]
    long_values: list[Setting] = []
    sections = list(settings_descriptions.MEMORY_LANE.items())
    undescribed = {
        key: "*not described yet*" for key in settings if key not in settings_descriptions.described_keys()
    }
    if undescribed:
        sections.append(("Not described yet", undescribed))
    for section, descriptions in sections:
        rows = [(settings[key], text) for key, text in descriptions.items() if key in settings]
        if not rows:
            continue
        title, _, note = section.partition(" — ")
        lines += ["", f"### {title}", ""] + ([note, ""] if note else [])
        lines += ["| key | default | variable | what it does |", "| --- | --- | --- | --- |"]
        for setting, text in rows:
            variable = ", ".join(f"`{name}`" for name in setting.environment) or "—"
            lines.append(
                f"| `{setting.key}` | {_default_cell(setting, long_values)} | {variable} | {_cell(text)} |"
            )
    if long_values:
        lines += [
            "",
            "## Long defaults",
            "",
            "The defaults too long for their tables, in JSON as `MEMORYLANE_CONFIG` takes them (a string",
            "is shown wrapped).",
            "",
        ]
        for setting in long_values:
            lines += [f"#### {setting.key} {{#{_anchor(setting.key)}}}", "", *_block(setting.default), ""]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
    for problem in problems():
        print(f"warning: {problem}")
