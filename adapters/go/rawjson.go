package main

import (
	"encoding/json"
	"unicode/utf8"
)

// The requests a batch or a sequence carries are cut out of their line, which
// was checked as valid JSON once, by the cuts below instead of encoding/json's
// decoder: that one scanned each nested request's bytes six times before its
// own fields were read (the line, the list, the request, each once to check
// and once to find its parts) and was a third of the adapter's CPU in a
// conform run.  Each cut gives what json.Unmarshal into a map of, or a slice
// of, json.RawMessage gives, on valid JSON only.

// jsonMembers are the members of the valid JSON value data by key (a key given
// twice: its last value), or false when data is not an object.
func jsonMembers(data []byte) (map[string]json.RawMessage, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	members := map[string]json.RawMessage{}
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] == '"' {
		keyEnd := stringEnd(data, i)
		key := jsonKey(data[i:keyEnd])
		start := skipSpace(data, skipSpace(data, keyEnd)+1) // past the colon
		end := valueEnd(data, start)
		members[key] = data[start:end:end]
		i = skipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return members, true
}

// jsonElements are the elements of the valid JSON value data, or false when
// data is not an array.
func jsonElements(data []byte) ([]json.RawMessage, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, false
	}
	elements := []json.RawMessage{}
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] != ']' {
		end := valueEnd(data, i)
		elements = append(elements, data[i:end:end])
		i = skipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return elements, true
}

// jsonKey is the string a quoted key stands for: its bytes themselves when they
// are plain ASCII, else as encoding/json unquotes it.
func jsonKey(quoted []byte) string {
	inner := quoted[1 : len(quoted)-1]
	for _, c := range inner {
		if c < ' ' || c == '\\' || c >= utf8.RuneSelf {
			var key string
			_ = json.Unmarshal(quoted, &key) // valid JSON: a string always decodes
			return key
		}
	}
	return string(inner)
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index just past the string that starts at i.
func stringEnd(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(data)
}

// valueEnd is the index just past the value that starts at i.
func valueEnd(data []byte, i int) int {
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				i = stringEnd(data, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(data)
	}
	for i < len(data) { // a number, true, false or null
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}
