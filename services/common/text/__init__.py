"""The text layer every service shares: how words, sentences and Markdown are read.

- `words`: tokens, the stemmer, content words, numbers, names (`Analysis` of one text);
- `units`: the sentence splitter: a text cut along its Markdown lines, then into sentences;
- `prose`: the prose sentences of a chunk, each under its heading (highlights, quotes);
- `display`: Markdown as a reader sees it rendered;
- `question`: question understanding (type, answer form, number and name cues, focus terms);
- `lists`: the word lists, read once from the data files in `wordlists/`.

One splitter and one stemmer: what Search scores, what an answer quotes and what the validator
checks are cut and stemmed alike.
"""
