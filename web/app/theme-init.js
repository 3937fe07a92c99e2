// Pick the theme before the first paint (saved choice, else the system's). A classic script of
// its own, loaded from the head, so that a strict Content-Security-Policy needs no inline script.
try {
  const saved = localStorage.getItem('mha-theme');
  const dark = saved ? saved === 'dark' : matchMedia('(prefers-color-scheme: dark)').matches;
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
} catch { /* storage blocked: keep light */ }
