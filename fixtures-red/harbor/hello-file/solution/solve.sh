#!/bin/bash
printf 'Hello, world!\n' > hello.txt
