package sidefile

import (
	"strings"
	"unicode/utf8"

	"github.com/kseg/kseg/inspect/fileio"
)

// Property is one key of a Java properties file, with the line its
// logical line starts on (1-based) and the byte position of that line.
type Property struct {
	Key, Value string
	Line       int
	Pos        int64
}

// Properties is a Java properties file as java.util.Properties.load reads
// it: keys in the order of their first appearance, a key given twice
// keeping its last value.
type Properties struct {
	List  []Property
	index map[string]int
}

// Get returns a key's value.
func (p *Properties) Get(key string) (Property, bool) {
	i, ok := p.index[key]
	if !ok {
		return Property{}, false
	}
	return p.List[i], true
}

// Map returns the keys and values.
func (p *Properties) Map() map[string]string {
	m := make(map[string]string, len(p.List))
	for _, e := range p.List {
		m[e.Key] = e.Value
	}
	return m
}

// ParseProperties reads a properties file as Properties.load(Reader)
// does (server.properties, meta.properties): natural lines end at "\n",
// "\r" or "\r\n"; blank lines and lines whose first non-blank character is
// '#' or '!' are skipped; a line ending in an odd number of backslashes
// continues on the next, whose leading blanks are dropped; the key ends at
// the first unescaped '=', ':' or blank, and one '=' or ':' after blanks
// belongs to the separator; "\t", "\n", "\r", "\f", "\uXXXX" and "\x" (any
// other character, itself) are unescaped. The only error is Java's own: a
// malformed "\uXXXX" escape (IllegalArgumentException), a *CorruptError of
// kind ErrCheckpointFormat naming the byte position of its line.
func ParseProperties(file string, b []byte) (*Properties, error) {
	p := &Properties{index: map[string]int{}}
	var logical strings.Builder
	startLine, line := 0, 0
	var startPos int64
	cont := false
	var err error
	eachJavaLine(b, func(raw []byte, pos int64) bool {
		line++
		s := string(raw)
		if cont {
			s = strings.TrimLeft(s, " \t\f")
		} else {
			s = strings.TrimLeft(s, " \t\f")
			if s == "" || s[0] == '#' || s[0] == '!' {
				return true
			}
			logical.Reset()
			startLine, startPos = line, pos
		}
		// A line ending in an odd number of backslashes continues.
		n := 0
		for n < len(s) && s[len(s)-1-n] == '\\' {
			n++
		}
		if n%2 == 1 {
			logical.WriteString(s[:len(s)-1])
			cont = true
			return true
		}
		logical.WriteString(s)
		cont = false
		if e := p.add(logical.String(), startLine, startPos); e != nil {
			err = fileio.Corruptf(file, startPos, ErrCheckpointFormat, "line %d: %v", startLine, e)
			return false
		}
		return true
	})
	if err == nil && cont {
		// A continuation at the end of the file ends the logical line.
		if e := p.add(logical.String(), startLine, startPos); e != nil {
			err = fileio.Corruptf(file, startPos, ErrCheckpointFormat, "line %d: %v", startLine, e)
		}
	}
	return p, err
}

// add splits a logical line into key and value and records it.
func (p *Properties) add(s string, line int, pos int64) error {
	i := 0
	for i < len(s) {
		c := s[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		i++
	}
	i = min(i, len(s))
	rawKey, rest := s[:i], s[i:]
	rest = strings.TrimLeft(rest, " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	key, err := unescapeProperty(rawKey)
	if err != nil {
		return err
	}
	value, err := unescapeProperty(rest)
	if err != nil {
		return err
	}
	e := Property{Key: key, Value: value, Line: line, Pos: pos}
	if j, ok := p.index[key]; ok {
		p.List[j] = e
		return nil
	}
	p.index[key] = len(p.List)
	p.List = append(p.List, e)
	return nil
}

// unescapeProperty is Properties.loadConvert.
func unescapeProperty(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			if c != '\\' {
				out.WriteByte(c)
			}
			continue
		}
		i++
		switch s[i] {
		case 't':
			out.WriteByte('\t')
		case 'n':
			out.WriteByte('\n')
		case 'r':
			out.WriteByte('\r')
		case 'f':
			out.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", errMalformedEscape
			}
			var r rune
			for _, h := range s[i+1 : i+5] {
				switch {
				case h >= '0' && h <= '9':
					r = r<<4 | (h - '0')
				case h >= 'a' && h <= 'f':
					r = r<<4 | (h - 'a' + 10)
				case h >= 'A' && h <= 'F':
					r = r<<4 | (h - 'A' + 10)
				default:
					return "", errMalformedEscape
				}
			}
			if !utf8.ValidRune(r) {
				r = utf8.RuneError
			}
			out.WriteRune(r)
			i += 4
		default:
			out.WriteByte(s[i])
		}
	}
	return out.String(), nil
}

var errMalformedEscape = propertiesError(`malformed \uxxxx encoding`)

type propertiesError string

func (e propertiesError) Error() string { return string(e) }
