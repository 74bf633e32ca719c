package apisnap

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The headings of the groups the checks read, as Keep a Changelog names
// them.
const (
	headingDeprecated = "Deprecated"
	headingRemoved    = "Removed"
)

// groupHeadings are the headings a section's groups may have.
var groupHeadings = []string{"Security", "Added", "Changed", headingDeprecated, headingRemoved, "Fixed"}

// HistoryHeading is the heading of the changelog's last section: the
// module's history before the changelog, as version 0.0.0. It has no
// groups.
const HistoryHeading = "## 0.0.0 (unreleased, before the changelog)"

// Changelog is CHANGELOG.md, Keep a Changelog's structure checked: a "#
// Changelog" title, then sections newest first: "## [Unreleased]" (if
// any), releases "## [X.Y.Z] - YYYY-MM-DD" with descending versions and
// dates, and last the history ([HistoryHeading]). A section but the
// history has its entries ("- " list items) in groups "### Heading", each
// heading one of Security, Added, Changed, Deprecated, Removed and Fixed,
// at most once per section.
type Changelog struct {
	Sections []Section
}

// Section is one "## " section of the changelog.
type Section struct {
	// Line is the heading's line number, from 1.
	Line int
	// Version is the release's version without the "v" ("0.1.0"), empty
	// for Unreleased; Date its date (YYYY-MM-DD).
	Version, Date string
	// History is the last section, the history before the changelog.
	History bool
	Groups  []Group
}

// Group is one "### " group of a section and its entries.
type Group struct {
	Heading string
	Line    int
	Entries []Entry
}

// Entry is one "- " list item, its lines joined by single spaces.
type Entry struct {
	Line int
	Text string
}

// ChangelogError is a line of the changelog that breaks its structure.
type ChangelogError struct {
	Line   int
	Reason string
}

func (e *ChangelogError) Error() string {
	return fmt.Sprintf("apisnap: CHANGELOG.md:%d: %s", e.Line, e.Reason)
}

// ParseChangelog reads a changelog and checks its structure (see
// [Changelog]); a break is a *ChangelogError.
func ParseChangelog(text string) (Changelog, error) {
	p := changelogParser{}
	for i, line := range strings.Split(text, "\n") {
		if err := p.line(i+1, strings.TrimRight(line, " \t\r")); err != nil {
			return Changelog{}, err
		}
	}
	p.endEntry()
	if !p.titled {
		return Changelog{}, &ChangelogError{Line: 1, Reason: `the first line is not "# Changelog"`}
	}
	return p.log, nil
}

type changelogParser struct {
	log    Changelog
	titled bool
	// entry is the entry being read, if any; blank whether a blank line
	// followed its last line; fence whether a code block is open.
	entry        *Entry
	blank, fence bool
}

func (p *changelogParser) line(n int, line string) error {
	if p.fence || strings.HasPrefix(strings.TrimSpace(line), "```") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			p.fence = !p.fence
		}
		if p.entry != nil {
			p.entry.Text += " " + strings.TrimSpace(line)
		}
		return nil
	}
	if p.entry != nil {
		switch {
		case line == "":
			p.blank = true
			return nil
		case line[0] == ' ' || line[0] == '\t':
			p.entry.Text += " " + strings.TrimSpace(line)
			p.blank = false
			return nil
		}
		p.endEntry()
	}
	switch {
	case n == 1:
		if line != "# Changelog" {
			return &ChangelogError{Line: n, Reason: `the first line is not "# Changelog"`}
		}
		p.titled = true
	case strings.HasPrefix(line, "## "):
		return p.section(n, line)
	case strings.HasPrefix(line, "### "):
		return p.group(n, strings.TrimPrefix(line, "### "))
	case strings.HasPrefix(line, "#"):
		return &ChangelogError{Line: n, Reason: fmt.Sprintf("%q: a heading is ## (a section) or ### (a group of entries)", line)}
	case strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "* "):
		return p.startEntry(n, line)
	}
	return nil // a paragraph
}

func (p *changelogParser) section(n int, line string) error {
	s := Section{Line: n}
	secs := p.log.Sections
	if len(secs) > 0 && secs[len(secs)-1].History {
		return &ChangelogError{Line: n, Reason: fmt.Sprintf("a section after %q: that one is the last; move the section above it", HistoryHeading)}
	}
	switch {
	case line == "## [Unreleased]":
		if len(secs) > 0 {
			return &ChangelogError{Line: n, Reason: "## [Unreleased] is not the first section: newest first, it comes before every release"}
		}
		p.log.Sections = append(secs, s)
		return nil
	case line == HistoryHeading:
		s.History, s.Version = true, "0.0.0"
	default:
		v, date, ok := strings.Cut(strings.TrimPrefix(line, "## ["), "] - ")
		if !ok || !strings.HasPrefix(line, "## [") {
			return &ChangelogError{Line: n, Reason: fmt.Sprintf("%q: a section is ## [Unreleased] or ## [X.Y.Z] - YYYY-MM-DD", line)}
		}
		if _, ok := parseVersion(v); !ok {
			return &ChangelogError{Line: n, Reason: fmt.Sprintf("%q: the version is not X.Y.Z (digits, no v)", line)}
		}
		if _, err := time.Parse(time.DateOnly, date); err != nil {
			return &ChangelogError{Line: n, Reason: fmt.Sprintf("%q: the date is not YYYY-MM-DD", line)}
		}
		s.Version, s.Date = v, date
	}
	if len(secs) > 0 && secs[len(secs)-1].Version != "" {
		prev := secs[len(secs)-1]
		if CompareVersions(s.Version, prev.Version) >= 0 {
			return &ChangelogError{Line: n, Reason: fmt.Sprintf("version %s is not older than %s (line %d): newest first", s.Version, prev.Version, prev.Line)}
		}
		if s.Date > prev.Date {
			return &ChangelogError{Line: n, Reason: fmt.Sprintf("%s is dated after %s (line %d): newest first", s.Version, prev.Version, prev.Line)}
		}
	}
	p.log.Sections = append(secs, s)
	return nil
}

func (p *changelogParser) group(n int, heading string) error {
	s := p.current()
	switch {
	case s == nil:
		return &ChangelogError{Line: n, Reason: fmt.Sprintf("### %s before any ## section", heading)}
	case s.History:
		return &ChangelogError{Line: n, Reason: fmt.Sprintf("### %s in the history section, which has no groups: put it under ## [Unreleased]", heading)}
	case !slices.Contains(groupHeadings, heading):
		return &ChangelogError{Line: n, Reason: fmt.Sprintf("### %s: a group is one of %s", heading, strings.Join(groupHeadings, ", "))}
	}
	for _, g := range s.Groups {
		if g.Heading == heading {
			return &ChangelogError{Line: n, Reason: fmt.Sprintf("a second ### %s in the section of line %d (the first is on line %d): move its entries there", heading, s.Line, g.Line)}
		}
	}
	s.Groups = append(s.Groups, Group{Heading: heading, Line: n})
	return nil
}

func (p *changelogParser) startEntry(n int, line string) error {
	s := p.current()
	if s == nil {
		return &ChangelogError{Line: n, Reason: "an entry before any ## section"}
	}
	if !s.History && len(s.Groups) == 0 {
		return &ChangelogError{Line: n, Reason: fmt.Sprintf("an entry outside any group: put it under one of ### %s", strings.Join(groupHeadings, ", ### "))}
	}
	p.entry = &Entry{Line: n, Text: strings.TrimSpace(line[2:])}
	p.blank = false
	return nil
}

func (p *changelogParser) endEntry() {
	if p.entry == nil {
		return
	}
	if s := p.current(); !s.History {
		g := &s.Groups[len(s.Groups)-1]
		g.Entries = append(g.Entries, *p.entry)
	}
	p.entry = nil
}

func (p *changelogParser) current() *Section {
	if len(p.log.Sections) == 0 {
		return nil
	}
	return &p.log.Sections[len(p.log.Sections)-1]
}

// Released is the newest released section: the first with a version,
// the history when no release was made yet.
func (c Changelog) Released() (Section, bool) {
	for _, s := range c.Sections {
		if s.Version != "" {
			return s, true
		}
	}
	return Section{}, false
}

// Since returns the entries of groups heading in the sections newer
// than version ("v0.1.0"): Unreleased and the releases after it.
func (c Changelog) Since(version string, headings ...string) []Entry {
	var out []Entry
	for _, s := range c.Sections {
		if s.Version != "" && CompareVersions(s.Version, version) <= 0 {
			break
		}
		out = append(out, s.entries(headings)...)
	}
	return out
}

// Until returns the entries of groups heading in the releases up to
// version ("v0.1.0"), that one included.
func (c Changelog) Until(version string, headings ...string) []Entry {
	var out []Entry
	for _, s := range c.Sections {
		if s.Version != "" && CompareVersions(s.Version, version) <= 0 {
			out = append(out, s.entries(headings)...)
		}
	}
	return out
}

// All returns the entries of groups heading in every section.
func (c Changelog) All(headings ...string) []Entry {
	var out []Entry
	for _, s := range c.Sections {
		out = append(out, s.entries(headings)...)
	}
	return out
}

func (s Section) entries(headings []string) []Entry {
	var out []Entry
	for _, g := range s.Groups {
		if slices.Contains(headings, g.Heading) {
			out = append(out, g.Entries...)
		}
	}
	return out
}

// parseVersion reads X.Y.Z, three decimal numbers.
func parseVersion(v string) ([3]int, bool) {
	var out [3]int
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return out, false
	}
	for i, part := range parts {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 || part != strconv.Itoa(n) {
			return out, false
		}
		out[i] = n
	}
	return out, true
}

// CompareVersions orders two versions, X.Y.Z or vX.Y.Z; one that does
// not parse is older than any that does.
func CompareVersions(a, b string) int {
	va, oka := parseVersion(strings.TrimPrefix(a, "v"))
	vb, okb := parseVersion(strings.TrimPrefix(b, "v"))
	switch {
	case !oka || !okb:
		if oka == okb {
			return 0
		}
		if oka {
			return 1
		}
		return -1
	}
	return slices.Compare(va[:], vb[:])
}

// codeSpans returns the text of the entry's code spans (between single
// backticks).
func codeSpans(text string) []string {
	parts := strings.Split(text, "`")
	var out []string
	for i := 1; i < len(parts)-1; i += 2 {
		out = append(out, parts[i])
	}
	return out
}
