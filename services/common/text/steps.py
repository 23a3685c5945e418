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


def step_readings(text: str, units: list[Unit]) -> dict[int, str]:
    """For each prose unit (by index) ending with ":" that a short code block follows: the step
    as it reads with its command, "Convert to SDF format for Gazebo: `gz sdf -p your_robot.urdf`"
    (several lines joined by "; "). A block that would not read as one sentence is left out."""
    found = {}
    for index, unit in enumerate(units[:-1]):
        line = text[unit.start : unit.end].rstrip()
        if unit.kind not in (UnitKind.PARAGRAPH, UnitKind.LIST_ITEM) or not line.endswith(":"):
            continue
        command = _command(text, units, index + 1)
        if not command or not display_text(line).rstrip(" :"):
            continue
        reading = f"{line.rstrip(' :')}: `{command}`"
        if len(sentence_spans(reading)) == 1:
            found[index] = reading
    return found


def _command(text: str, units: list[Unit], fence: int) -> str:
    """The command of the fenced block opening at units[fence], "" when there is none or it is
    too long to be one."""
    opening = text[units[fence].start : units[fence].end]
    if units[fence].kind != UnitKind.MARKUP or not opening.startswith(("```", "~~~")):
        return ""
    language = opening.lstrip("`~").strip().split(" ", 1)[0].split("{", 1)[0].lower()
    if language not in COMMAND_LANGUAGES:
        return ""
    lines = []
    for unit in units[fence + 1 :]:
        if unit.kind != UnitKind.CODE:
            break
        line = text[unit.start : unit.end].strip()
        for prompt in _PROMPTS:
            line = line.removeprefix(prompt)
        if line and not line.startswith(_COMMENTS):
            lines.append(line)
    else:
        return ""  # a block left open to the end of the chunk is cut: its rest is unknown
    command = "; ".join(lines)
    if not lines or len(lines) > MAX_COMMAND_LINES or len(command) > MAX_COMMAND_CHARS or "`" in command:
        return ""
    return command
