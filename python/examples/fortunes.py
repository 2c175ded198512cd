"""Search the fortune cookies of Debian's fortunes package by the words
they share with your text.

    .venv/bin/python python/examples/fortunes.py "love and money" "a new friend"
"""
import sys

import genie

with open("/usr/share/games/fortunes/fortunes", encoding="utf-8", errors="replace") as f:
    cookies = [c.strip() for c in f.read().split("\n%\n") if c.strip()]
with open("scripts/english-stopwords.txt") as f:
    stop_words = f.read().split()

with genie.TextIndex.build(cookies, "/tmp/fortunes.genie", stop_words=stop_words) as index:
    texts = sys.argv[1:] or ["love and money", "a new friend"]
    counts, ids = index.search(texts, k=3)
    for text, row_counts, row_ids in zip(texts, counts, ids):
        print(f"== {text}")
        for count, i in zip(row_counts, row_ids):
            if i >= 0:
                print(f"-- {count} shared words, cookie {i}:\n{index.record(i)}")
