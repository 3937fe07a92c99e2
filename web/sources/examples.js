// The example sentences of the explorer, each chosen to show a kind of relation.

export const EXAMPLES = [
  { text: 'The cat sat on the mat because it was tired.', shows: 'coreference: "it" refers to the cat, not the mat' },
  { text: 'Mary gave John a book, and she smiled at him.', shows: 'coreference by gender: "she" is Mary, "him" is John' },
  { text: 'The keys to the old cabinet are on the kitchen table.', shows: 'long-range agreement: "are" agrees with "keys", four words back, not with "cabinet"' },
  { text: 'The students who the teacher praised have finished their exams.', shows: 'long-range dependence across a relative clause: "have" belongs to "students"' },
  { text: 'The dog chased the cat, and the mouse watched the bird.', shows: 'semantic similarity: four animals, two clauses with parallel syntax' },
  { text: 'The quick brown fox jumps over the lazy dog.', shows: 'syntax: determiners and adjectives attach to their nouns' },
  { text: 'In the morning, the farmer walked to the market in the village.', shows: 'semantic classes: time, person, places' },
];
