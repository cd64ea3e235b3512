//! The demo server's skills (the `io.modelcontextprotocol/skills` extension, SEP-2640): two
//! small skills with supporting files in subdirectories, so that the conformance harness's
//! `sep-2640-skills-*` scenarios exercise listing, retrieval, the `SKILL.md` manifest and
//! `resources/directory/read` (including a subdirectory child).

use ferromcp_server::mcp_server::{McpServerBuilder, Skill};

const GREETING_SKILL_MD: &str = "---
name: greeting-style
description: Write greetings in the house style, with the right tone for each audience.
license: Apache-2.0
metadata:
  author: ferromcp
  version: \"1.0\"
---
# Greeting style

1. Read `references/TONE.md` to pick a tone for the audience.
2. Draft the greeting; run `scripts/check.py` on it to check its length.
";

const GREETING_TONE_MD: &str = "# Tones

- **Formal**: full names, no exclamation marks.
- **Friendly**: first names, one exclamation mark at most.
";

const GREETING_CHECK_PY: &str = "import sys

text = sys.stdin.read()
print(\"ok\" if len(text) <= 280 else \"too long\")
";

const CSV_SKILL_MD: &str = "---
name: csv-summary
description: Summarize a CSV file by column, with counts and ranges.
---
# CSV summary

Fill in `templates/REPORT.md` with one line per column.
";

const CSV_REPORT_MD: &str = "# Report\n\n| column | kind | count | range |\n|---|---|---|---|\n";

/// Registers the demo skills on `builder`.
pub(super) fn register(builder: McpServerBuilder) -> McpServerBuilder {
    builder
        .skill(
            Skill::new(GREETING_SKILL_MD)
                .file("references/TONE.md", GREETING_TONE_MD)
                .file("scripts/check.py", GREETING_CHECK_PY),
        )
        .skill(Skill::new(CSV_SKILL_MD).file("templates/REPORT.md", CSV_REPORT_MD))
}
