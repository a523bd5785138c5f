package tokenizer

import "unicode/utf8"

// byteRune is GPT-2's bytes_to_unicode table: byte-level BPE vocabularies
// spell each byte as a printable rune, so that every token is printable
// text ("Ġ" is the space byte 0x20, "Ċ" the newline 0x0A).
var byteRune [256]rune

// runeByte inverts byteRune: runeByte[r] is the byte spelled by rune r for
// the 256 runes byteRune uses (all below 324), and -1 for other runes.
var runeByte [324]int16

func init() {
	for i := range runeByte {
		runeByte[i] = -1
	}
	n := 0
	for b := range 256 {
		printable := b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE
		if printable {
			byteRune[b] = rune(b)
		} else {
			byteRune[b] = rune(256 + n)
			n++
		}
		runeByte[byteRune[b]] = int16(b)
	}
}

// appendByteLevelDecode appends the raw bytes a byte-level token string
// spells to dst. Runes outside the byte-level alphabet are kept as their
// own UTF-8, as the Hugging Face ByteLevel decoder does; ok reports
// whether every rune was in the alphabet.
func appendByteLevelDecode(dst []byte, tok string) (_ []byte, ok bool) {
	ok = true
	for _, r := range tok {
		if r >= 0 && int(r) < len(runeByte) && runeByte[r] >= 0 {
			dst = append(dst, byte(runeByte[r]))
			continue
		}
		ok = false
		dst = utf8.AppendRune(dst, r)
	}
	return dst, ok
}
