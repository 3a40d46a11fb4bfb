package testhost

import (
	"os"
	"strings"
	"sync"
	"testing"
)

// Recipe is the platform this process's test hosts run unless a test says otherwise (OnRecipe):
// TESTHOST_RECIPE, or trixie when it is unset. testhost.sh's recipes are recipe.sh (trixie) and
// recipe-NAME.sh for each other platform (testing: Debian testing).
func Recipe() string {
	if r := os.Getenv("TESTHOST_RECIPE"); r != "" {
		return r
	}
	return "trixie"
}

var (
	recipesMu sync.Mutex
	recipes   = map[string]string{} // test name → recipe of the hosts it and its subtests start
)

// OnRecipe makes the hosts that t and its subtests start run recipe, whatever the process's Recipe:
// one test process can run a suite of tests on a second platform beside the rest (call it before
// t.Run). That platform's base image is built on the first Start that needs it.
func OnRecipe(t testing.TB, recipe string) {
	recipesMu.Lock()
	defer recipesMu.Unlock()
	recipes[t.Name()] = recipe
	t.Cleanup(func() {
		recipesMu.Lock()
		defer recipesMu.Unlock()
		delete(recipes, t.Name())
	})
}

// RecipeOf is the platform the hosts t starts run: the recipe OnRecipe set for t or the nearest of
// its parents, else Recipe.
func RecipeOf(t testing.TB) string {
	recipesMu.Lock()
	defer recipesMu.Unlock()
	if r, _ := suiteOf(t.Name()); r != "" {
		return r
	}
	return Recipe()
}

// suiteOf finds the nearest test above or at name that OnRecipe set: its recipe and name.
func suiteOf(name string) (recipe, suite string) {
	for n := name; ; {
		if r, ok := recipes[n]; ok {
			return r, n
		}
		i := strings.LastIndex(n, "/")
		if i < 0 {
			return "", ""
		}
		n = n[:i]
	}
}

// usageName is the name a test's Usage is counted under: its top-level test, or, within a suite
// run on another platform, the suite's test one level down (TestOnX/TestY).
func usageName(name string) string {
	recipesMu.Lock()
	_, suite := suiteOf(name)
	recipesMu.Unlock()
	if suite == "" {
		return topLevel(name)
	}
	rest, _, _ := strings.Cut(strings.TrimPrefix(name, suite+"/"), "/")
	return suite + "/" + rest
}

var builds sync.Map // recipe → func() error, each building its base image once

// buildRecipe builds recipe's base image unless it is built (testhost.sh build; a no-op when
// cached, and it waits on a build already under way). It is quiet: its errors say what failed.
func buildRecipe(recipe string) error {
	f, _ := builds.LoadOrStore(recipe, sync.OnceValue(func() error {
		_, err := runScript(nil, []string{"TESTHOST_RECIPE=" + recipe}, "build")
		return err
	}))
	return f.(func() error)()
}
