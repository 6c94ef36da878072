module keeper/test/gotemplate

go 1.22
