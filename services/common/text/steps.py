"""A step and its command: a line ending with ":" read with the short code block it introduces.

"Convert to SDF format for Gazebo:" above a block holding `gz sdf -p your_robot.urdf` tells how
only with the command; alone it answers "How do I load a URDF robot into Gazebo?" with "Convert
to SDF format for Gazebo." The answerer quotes such a step with its command and the validator
reads it so (`step_reading` is the one text both see); code stays out of prose otherwise, and a
longer block, or a few lines of a program, is never quoted.
"""

from __future__ import annotations

from services.common.text.display import display_text
from services.common.text.units import Unit, UnitKind, sentence_spans

# A command is a block of at most this many lines (comments and blank lines aside) and characters.
MAX_COMMAND_LINES = 3
MAX_COMMAND_CHARS = 160
# Blocks of these languages (or of none) hold commands and settings; a few lines of a program
# ("print(scan)" under "Create a validation script:") are an excerpt, not a step's command.
COMMAND_LANGUAGES = frozenset(
    {
        "",
        "bash",
        "sh",
        "shell",
        "console",
        "zsh",
        "terminal",
        "powershell",
        "ps",
        "cmd",
        "bat",
        "text",
        "xml",
        "yaml",
        "yml",
        "json",
        "toml",
        "ini",
        "env",
        "dotenv",
        "properties",
    }
)
# A shell prompt before a command is not part of it.
_PROMPTS = ("$ ", "> ", "% ")
_COMMENTS = ("#", "//")


# Shell blocks, whose comments say what the commands under them do.
SHELL_LANGUAGES = frozenset({"", "bash", "sh", "shell", "console", "zsh", "terminal"})
# A comment labelling commands says something: at least this many words.
MIN_COMMENT_WORDS = 2


def step_readings(text: str, units: list[Unit]) -> dict[int, str]:
    """For each unit (by index) that introduces a short command: the step as it reads with it,
    "Convert to SDF format for Gazebo: `gz sdf -p your_robot.urdf`" (several lines joined by
    "; "). A step is a prose line ending with ":" above a short code block, or in a shell block a
    comment above the commands it labels ("# Build and run tests" above `colcon test ...`). A
    step that would not read as one sentence is left out."""
    found = {}
    for index, unit in enumerate(units[:-1]):
        line = text[unit.start : unit.end].rstrip()
        if unit.kind in (UnitKind.PARAGRAPH, UnitKind.LIST_ITEM) and line.endswith(":"):
            command, label = _command(text, units, index + 1), line.rstrip(" :")
        elif unit.kind == UnitKind.MARKUP and _language(line) in SHELL_LANGUAGES:
            found.update(_commented_commands(text, units, index))
            continue
        else:
            continue
        reading = f"{label}: `{command}`"
        if command and display_text(label) and len(sentence_spans(reading)) == 1:
            found[index] = reading
    return found


def _commented_commands(text: str, units: list[Unit], fence: int) -> dict[int, str]:
    """In the shell block opening at units[fence], each comment (by unit index) read with the
    commands under it, up to a blank line or the next comment."""
    found = {}
    block = _closed_block(units, fence)
    index = fence + 1
    for at, unit in enumerate(block):
        comment = text[unit.start : unit.end].strip()
        if not comment.startswith("# ") or len(comment[2:].split()) < MIN_COMMENT_WORDS:
            continue
        lines = []
        for later, previous in zip(block[at + 1 :], block[at:], strict=False):
            line = _code_line(text, later)
            if line.startswith("#") or "\n\n" in text[previous.end : later.start]:
                break
            lines.append(line)
        command = _as_command(lines)
        if command:
            reading = f"{comment[2:].strip().rstrip(':')}: `{command}`"
            if len(sentence_spans(reading)) == 1:
                found[index + at] = reading
    return found


def _command(text: str, units: list[Unit], fence: int) -> str:
    """The command of the fenced block opening at units[fence], "" when there is none or it is
    too long to be one."""
    opening = units[fence]
    if (
        opening.kind != UnitKind.MARKUP
        or _language(text[opening.start : opening.end]) not in COMMAND_LANGUAGES
    ):
        return ""
    lines = [_code_line(text, unit) for unit in _closed_block(units, fence)]
    return _as_command([line for line in lines if line and not line.startswith(_COMMENTS)])


def _closed_block(units: list[Unit], fence: int) -> list[Unit]:
    """The code lines of the block opening at units[fence]; none when the chunk ends before the
    block does (a block cut there: its rest is unknown)."""
    block = []
    for unit in units[fence + 1 :]:
        if unit.kind != UnitKind.CODE:
            return block
        block.append(unit)
    return []


def _code_line(text: str, unit: Unit) -> str:
    """A line of code as a command: stripped, without a shell prompt."""
    line = text[unit.start : unit.end].strip()
    for prompt in _PROMPTS:
        line = line.removeprefix(prompt)
    return line


def _as_command(lines: list[str]) -> str:
    """Lines of a block as one command: a line ending with a backslash goes on in the next, and
    several commands are joined by "; "; "" when they are too many or too long to quote."""
    joined: list[str] = []
    for line in lines:
        if joined and joined[-1].endswith("\\"):
            joined[-1] = f"{joined[-1][:-1].rstrip()} {line}"
        else:
            joined.append(line)
    command = "; ".join(joined)
    if not joined or len(joined) > MAX_COMMAND_LINES or len(command) > MAX_COMMAND_CHARS or "`" in command:
        return ""
    return command


def _language(fence: str) -> str | None:
    """The language a fence line opens a block of ("" for none), None for a line that is no fence."""
    if not fence.startswith(("```", "~~~")):
        return None
    return fence.lstrip("`~").strip().split(" ", 1)[0].split("{", 1)[0].lower()
